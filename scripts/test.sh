#!/usr/bin/env bash
# Runs pantty's checks and tests on a fresh Debian machine with Go: installs what
# the tests need when it is missing (tmux; bubblewrap and socat; Node.js, the real Claude Code and the
# real Codex CLI for the end-to-end tests), then go vet, a gofmt check and
# go test ./... . Extra arguments go to `go test` (e.g. -short, -run X).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v tmux >/dev/null 2>&1; then
	echo "test.sh: installing tmux" >&2
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi
# Claude Code's Bash sandbox on Linux (seat isolation, docs/intake.md) needs
# bubblewrap and socat; the isolation tests run the real sandbox.
if ! command -v bwrap >/dev/null 2>&1 || ! command -v socat >/dev/null 2>&1; then
	echo "test.sh: installing bubblewrap and socat" >&2
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap socat >/dev/null
fi
echo "test.sh: $(go version), $(tmux -V)" >&2

# The real Claude Code for seat/claudecode's end-to-end tests, installed once into
# a cache outside the repository (they run it against a loopback API stand-in: no
# network to Anthropic, no key). The tests use the native binary directly.
claude_version=2.1.328
claude_cache="${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}/claude"
case "$(uname -m)" in
	x86_64 | amd64) claude_arch=x64 ;;
	aarch64 | arm64) claude_arch=arm64 ;;
	*) claude_arch=$(uname -m) ;;
esac
claude_bin="$claude_cache/node_modules/@anthropic-ai/claude-code-linux-$claude_arch/claude"
if ! { [ -x "$claude_bin" ] && "$claude_bin" --version 2>/dev/null | grep -q "^$claude_version "; }; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "test.sh: installing nodejs and npm" >&2
		as_root apt-get update -qq
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	echo "test.sh: installing Claude Code $claude_version into $claude_cache" >&2
	mkdir -p "$claude_cache"
	(cd "$claude_cache" && npm install --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$claude_version" >&2)
fi
export PANTTY_CLAUDE_BIN="$claude_bin"
echo "test.sh: claude $("$PANTTY_CLAUDE_BIN" --version)" >&2

# The real Codex CLI for seat/codex's end-to-end tests, the same way: the native
# binary of the npm package's platform dependency, run against a loopback
# Responses-API stand-in through a per-seat CODEX_HOME.
codex_version=0.171.0
codex_cache="${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}/codex"
case "$(uname -m)" in
	x86_64 | amd64) codex_pkg=x64 codex_triple=x86_64-unknown-linux-musl ;;
	aarch64 | arm64) codex_pkg=arm64 codex_triple=aarch64-unknown-linux-musl ;;
	*) codex_pkg=$(uname -m) codex_triple=$(uname -m) ;;
esac
codex_bin="$codex_cache/node_modules/@openai/codex-linux-$codex_pkg/vendor/$codex_triple/bin/codex"
if ! { [ -x "$codex_bin" ] && "$codex_bin" --version 2>/dev/null | grep -q " $codex_version\$"; }; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "test.sh: installing nodejs and npm" >&2
		as_root apt-get update -qq
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	echo "test.sh: installing Codex CLI $codex_version into $codex_cache" >&2
	mkdir -p "$codex_cache"
	(cd "$codex_cache" && npm install --no-audit --no-fund --loglevel=error "@openai/codex@$codex_version" >&2)
fi
export PANTTY_CODEX_BIN="$codex_bin"
echo "test.sh: $("$PANTTY_CODEX_BIN" --version)" >&2

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "test.sh: gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
# staticcheck when it is installed (go install honnef.co/go/tools/cmd/staticcheck@v0.8.2);
# not fetched here, so a machine without it still runs the tests.
staticcheck=$(command -v staticcheck || echo "$(go env GOPATH)/bin/staticcheck")
if [ -x "$staticcheck" ]; then
	"$staticcheck" ./...
fi
go test -count=1 -timeout 10m "$@" ./...
