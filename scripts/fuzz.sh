#!/usr/bin/env bash
# Runs pantty's fuzz targets, each for a bounded time, and prints the totals
# (execs, new interesting inputs, crashers) that docs/reliability.md records.
#
#   scripts/fuzz.sh                 # every target, 30s each
#   scripts/fuzz.sh --time 5m       # longer
#   scripts/fuzz.sh --only FuzzHook # one target (repeatable)
#
# A crasher is written by Go under seat/testdata/fuzz/<Target>/ and makes this
# script exit 1: keep it as a regression seed, fix the cause, rerun.
# Plain `go test` runs only the committed seed corpora.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=30s
only=()
while [ $# -gt 0 ]; do
	case "$1" in
	--time) fuzztime="$2"; shift 2 ;;
	--time=*) fuzztime="${1#--time=}"; shift ;;
	--only) only+=("$2"); shift 2 ;;
	--only=*) only+=("${1#--only=}"); shift ;;
	-h | --help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

# package:target, the reliability targets first, then the guard's.
targets=(
	./seat:FuzzSeatConfig
	./seat:FuzzReadState
	./seat:FuzzHook
	./seat:FuzzParseStatusLine
	./seat:FuzzParseReset
	./seat:FuzzGuard
	./seat:FuzzValidateMessage
	./internal/fsatomic:FuzzWithoutCommentLines
)

# The targets write small seats per input: on tmpfs their fsyncs cost nothing.
scratch=""
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	scratch=$(mktemp -d /dev/shm/pantty-fuzz-XXXXXX)
fi

log=$(mktemp)
trap 'rm -f "$log"; [ -z "$scratch" ] || rm -rf "$scratch"' EXIT
failed=0
summary=()
total_execs=0
for t in "${targets[@]}"; do
	pkg=${t%%:*} name=${t##*:}
	if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qx "$name"; then
		continue
	fi
	echo "fuzz.sh: $name ($pkg) for $fuzztime" >&2
	corpus="${pkg#./}/testdata/fuzz/$name"
	before=$( (find "$corpus" -type f 2>/dev/null || true) | wc -l)
	rc=0
	TMPDIR=${scratch:-${TMPDIR:-/tmp}} go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1 || rc=$?
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1 || true)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	interesting=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	after=$( (find "$corpus" -type f 2>/dev/null || true) | wc -l)
	crashers=$((after - before))
	if [ "$rc" -ne 0 ]; then
		failed=1
		echo "fuzz.sh: $name FAILED:" >&2
		grep -vE '^fuzz: elapsed' "$log" | tail -30 >&2
	fi
	total_execs=$((total_execs + ${execs:-0}))
	summary+=("$(printf '%-22s %12s execs  %5s new interesting  %2s crashers  %s' "$name" "${execs:-?}" "${interesting:-?}" "$crashers" "$([ "$rc" -eq 0 ] && echo ok || echo FAILED)")")
done

echo
echo "fuzz.sh: $fuzztime per target on $(nproc) cores, $(go version | awk '{print $3}')"
printf '%s\n' "${summary[@]}"
echo "total: $total_execs execs"
exit "$failed"
