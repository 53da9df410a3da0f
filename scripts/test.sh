#!/usr/bin/env bash
# Runs pantty's checks and tests on a fresh Debian machine with Go: installs what
# the tests need when it is missing (tmux now), then go vet, a gofmt check and
# go test ./... . Extra arguments go to `go test` (e.g. -short, -run X).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v tmux >/dev/null 2>&1; then
	echo "test.sh: installing tmux" >&2
	as_root apt-get update -qq
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
fi
echo "test.sh: $(go version), $(tmux -V)" >&2

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
	echo "test.sh: gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -count=1 -timeout 10m "$@" ./...
