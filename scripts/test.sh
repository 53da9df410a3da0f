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
# The fleet tests (cmd/pantty fleet_test.go) start a private OpenSSH server on
# loopback and reach it with the real ssh client.
if ! [ -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null 2>&1; then
	echo "test.sh: installing openssh-server and openssh-client" >&2
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client >/dev/null
fi
echo "test.sh: $(go version), $(tmux -V)" >&2

# ensure_harness NAME CACHE PACKAGE@VERSION BINARY VERSION_RE installs the npm
# package into CACHE (nodejs and npm first, when missing) unless BINARY is
# there and its --version matches VERSION_RE.
ensure_harness() {
	if [ -x "$4" ] && "$4" --version 2>/dev/null | grep -q "$5"; then
		return
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "test.sh: installing nodejs and npm" >&2
		as_root apt-get update -qq
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
	fi
	echo "test.sh: installing $1 into $2" >&2
	mkdir -p "$2"
	(cd "$2" && npm install --no-audit --no-fund --loglevel=error "$3" >&2)
}

# The real Claude Code for harness/claudecode's end-to-end tests, installed once into
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
ensure_harness "Claude Code $claude_version" "$claude_cache" "@anthropic-ai/claude-code@$claude_version" "$claude_bin" "^$claude_version "
export PANTTY_CLAUDE_BIN="$claude_bin"
echo "test.sh: claude $("$PANTTY_CLAUDE_BIN" --version)" >&2

# The real Codex CLI for harness/codex's end-to-end tests, the same way: the native
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
ensure_harness "Codex CLI $codex_version" "$codex_cache" "@openai/codex@$codex_version" "$codex_bin" " $codex_version\$"
export PANTTY_CODEX_BIN="$codex_bin"
echo "test.sh: $("$PANTTY_CODEX_BIN" --version)" >&2

# The real Gemini CLI for harness/gemini/standin's test that the real CLI completes
# a turn against the stand-in (no adapter yet: docs/gemini.md). Its npm package
# is JavaScript: node runs it.
gemini_version=0.61.0
gemini_cache="${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}/gemini"
gemini_bin="$gemini_cache/node_modules/.bin/gemini"
ensure_harness "Gemini CLI $gemini_version" "$gemini_cache" "@google/gemini-cli@$gemini_version" "$gemini_bin" "^$gemini_version\$"
export PANTTY_GEMINI_BIN="$gemini_bin"
echo "test.sh: gemini $("$PANTTY_GEMINI_BIN" --version)" >&2

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
# -p 4: four test packages at a time even on two cores. The suite waits on
# real harnesses, tmux and the clock far more than it computes (user+sys
# 77 s of 295 s wall at the default -p 2 on this kind of machine); at -p 4
# the same run took 191 s. -timeout is a hang detector, per test binary: the
# real Claude Code package runs its tests one at a time and took 600 s of a
# 10m timeout in a CI run under the whole suite's load (2026-12-04).
# Claude Code's sandbox (isolation on) leaves a `.git` skeleton in /tmp the
# first time it runs (docs/claude-code.md, "Start-up without dialogs"), and
# from then on claude asks trust for /tmp, the "repository" holding every
# workdir the tests make there. A seat prepared just before that moment and
# started just after stops at the trust dialog (seen once: two real-Claude
# tests, 2026-12-06). Make the skeleton's directory first, as claude would,
# so every test's prepare-home sees the same /tmp.
for tmp_root in "${TMPDIR:-/tmp}" /tmp; do
	[ -e "$tmp_root/.git" ] || mkdir -p "$tmp_root/.git"
done
started=$(date +%s)
go test -count=1 -p 4 -timeout 20m "$@" ./...
echo "test.sh: go test took $(( $(date +%s) - started )) s"
