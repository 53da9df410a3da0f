#!/bin/sh
# scripts/bench.sh — pantty's performance measurements (docs/performance.md).
#
#   scripts/bench.sh            quick form (about 2-3 minutes on 2 cores, and
#                               2-6 more for the fleet section)
#   scripts/bench.sh --long     long form: more samples, 500 synthetic seats,
#                               a 60 s idle run (about 10 minutes)
#
# Options:
#   --only LIST    run only these sections: enqueue,hook,delivery,turnend,recover,status,fleet,claude,idle
#                  (turnend needs delivery; idle measures the seats started before it;
#                  fleet starts a private sshd on 127.0.0.1: docs/fleet.md; claude runs the
#                  real Claude Code against a loopback stand-in: PANTTY_CLAUDE_BIN, else the
#                  copy scripts/test.sh installs, else claude on PATH, else skipped)
#   --json FILE    also write the figures as JSON
#   --no-gotest    skip the in-process `go test -bench` benchmarks
#   --keep         keep the work directory (state roots, driver logs)
#   --compare BIN  also run another pantty binary (built before a change) interleaved
#                  in the seat send, enqueue replay, hook, recover and status figures,
#                  as "before"
#
# It builds pantty (and a Go hello-world, the floor of a process start) once,
# runs scripts/bench (which starts real seats on the simulator in private tmux
# servers under /tmp/pb-<pid>, and stops them and their servers at the end),
# prints one table of medians, p99s and ratios against the baselines run in
# the same process, then the go test benchmarks.
# Speed is reported, never asserted: the exit code is non-zero only when a
# measurement could not be taken or a correctness check failed.
set -eu

cd "$(dirname "$0")/.."
long=""
gotest=1
args=""
while [ $# -gt 0 ]; do
	case "$1" in
	--long) long="-long" ;;
	--no-gotest) gotest=0 ;;
	--keep) args="$args -keep" ;;
	--only) shift; args="$args -only $1" ;;
	--json) shift; args="$args -json $1" ;;
	--compare) shift; args="$args -compare $1" ;;
	-h|--help) sed -n '2,26p' "$0"; exit 0 ;;
	*) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

bin="$(mktemp -d /tmp/pantty-bench-bin.XXXXXX)"
trap 'rm -rf "$bin"' EXIT
trap 'exit 130' INT TERM
go build -o "$bin/pantty" ./cmd/pantty
go build -o "$bin/bench" ./scripts/bench
go build -o "$bin/hello" ./scripts/bench/hello

# The real Claude Code for the claude section: the copy scripts/test.sh
# installs, unless PANTTY_CLAUDE_BIN names one (the section finds claude on
# PATH otherwise, and is skipped without any).
if [ -z "${PANTTY_CLAUDE_BIN:-}" ]; then
	for c in "${PANTTY_HARNESS_CACHE:-$HOME/.cache/pantty-harness}"/claude/node_modules/@anthropic-ai/claude-code-linux-*/claude; do
		[ -x "$c" ] && export PANTTY_CLAUDE_BIN="$c"
	done
fi

status=0
# shellcheck disable=SC2086 # $args is a list of words on purpose
"$bin/bench" -pantty "$bin/pantty" -hello "$bin/hello" $long $args || status=$?

if [ "$gotest" = 1 ]; then
	benchtime="20x"
	[ -n "$long" ] && benchtime="1s"
	echo
	echo "go test benchmarks (in process, -benchtime $benchtime):"
	go test -run '^$' -bench 'Guard|Enqueue|RunHook' -benchtime "$benchtime" -benchmem ./seat/ | grep -E '^(Benchmark|ok|FAIL)' || status=1
	go test -run '^$' -bench 'Sweep' -benchtime 10x ./recover/ | grep -E '^(Benchmark|ok|FAIL)' || status=1
	go test -run '^$' -bench 'Read' -benchtime 10x ./seat/telemetry/ | grep -E '^(Benchmark|ok|FAIL)' || status=1
	# Both Codex paths in one run, on the real Codex CLI (skipped without it).
	go test -run '^$' -bench 'CodexPaths' -benchtime 10x ./harness/codex/ | grep -E '^(Benchmark|ok|FAIL|--- SKIP|    )' || status=1
fi
exit "$status"
