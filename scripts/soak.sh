#!/usr/bin/env bash
# The soak (docs/reliability.md): builds pantty once, then runs scripts/soak
# against it — seats on the simulated harness in real tmux under faults, counted
# from what reached the model. Bounded in time; stops by itself.
#
#   scripts/soak.sh --quick              # the CI form, about 2–3 minutes
#   scripts/soak.sh --duration 30m       # the long form
#   scripts/soak.sh --quick --seed 42    # replay the same random choices
#
# Other flags: --seats N, --senders N, --messages N, --keep, --quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v tmux >/dev/null 2>&1 || { echo "soak.sh: tmux is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pantty" ./cmd/pantty
go build -o "$work/soak" ./scripts/soak
"$work/soak" --bin "$work/pantty" "$@"
