#!/bin/sh
# measure-registry.sh — produce the operational rows of the gates registry
# (seat/gates/registry.toml) from the battery, for the pinned harness versions.
#
# For each harness it runs `pantty measure contract` against the installed
# binary (the harness cache scripts/test.sh fills) and its loopback stand-in,
# copies every row's artifact to seat/gates/measured/<harness>-<version>/ and
# prints the rows in the registry's form, citing those artifacts. Paste the
# rows into the harness's [[harness]] entry. CI's drift detector
# (seat/measure TestContractOnRealHarnesses) fails when a measured row and the
# shipped one disagree.
#
# Usage: scripts/measure-registry.sh [HARNESS...]   (default: claude-code codex)
set -eu
cd "$(dirname "$0")/.."
harnesses=${*:-claude-code codex}
bin=$(mktemp -d)/pantty
go build -o "$bin" ./cmd/pantty
for h in $harnesses; do
	home=$(mktemp -d)
	PANTTY_HOME=$home "$bin" measure contract --harness "$h" --registry-rows seat/gates/measured >"$home/rows.txt"
	sed -n '/^# /,$p' "$home/rows.txt"
	rm -rf "$home"
done
