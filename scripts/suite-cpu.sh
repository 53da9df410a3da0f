#!/usr/bin/env bash
# Where the test suite's CPU goes: runs scripts/test.sh (arguments pass on to
# it) under BSD process accounting and prints the machine's CPU over the run
# (from /proc/stat) and the CPU of every process that ended in it, by
# command, grouped (pantty, tmux, the harness binaries, the Go toolchain, the
# test binaries, shells). The suite is CPU-bound on a 2-core machine, so its
# wall time is its total CPU over the cores: this says which part to cut.
#
# Needs root (accton) and Debian's acct package, which it installs when
# missing. Nothing here is run by CI; docs/performance.md quotes a run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "suite-cpu.sh: process accounting needs root" >&2
	exit 2
fi
if ! command -v accton >/dev/null 2>&1 || ! command -v dump-acct >/dev/null 2>&1; then
	echo "suite-cpu.sh: installing acct" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq acct >/dev/null
fi

dir=$(mktemp -d)
acct="$dir/pacct"
: >"$acct"
# /proc/stat's first line: user nice system idle iowait irq softirq (ticks).
read -r _ u0 n0 s0 i0 w0 q0 sq0 _ </proc/stat
start=$(date +%s.%N)
accton "$acct" >/dev/null
set +e
scripts/test.sh "$@"
rc=$?
set -e
accton off >/dev/null
end=$(date +%s.%N)
read -r _ u1 n1 s1 i1 w1 q1 sq1 _ </proc/stat
hz=$(getconf CLK_TCK)

awk -v start="$start" -v end="$end" -v hz="$hz" \
	-v user="$(((u1 - u0) + (n1 - n0)))" -v sys="$(((s1 - s0) + (q1 - q0) + (sq1 - sq0)))" \
	-v idle="$(((i1 - i0) + (w1 - w0)))" 'BEGIN {
	wall = end - start
	busy = (user + sys) / hz
	printf "suite-cpu: wall %.0f s; the machine: %.0f CPU-s busy (user %.0f, system %.0f), %.0f idle; %.2f cores busy on average\n",
		wall, busy, user / hz, sys / hz, idle / hz, busy / wall
}'

# dump-acct: comm|version|utime|stime|etime|uid|gid|mem|io|pid|ppid|… with
# times in AHZ ticks (100 a second). A multi-threaded process is recorded
# under the name of its last thread to exit (claude shows as "Bun Pool 0",
# codex as "tokio-rt-worker"), so the harness binaries are told apart from
# the small tools they and the tests start (git, lsb_release, sh, sleep, …)
# by cost: a name outside the named groups whose processes took 50 ms or
# more each on average is counted as a harness binary's.
dump-acct "$acct" | awk -F'|' '
function group(c) {
	if (c == "pantty" || c == "pantty.real") return "pantty (driver, hooks, exec, CLI, simulator)"
	if (c ~ /^tmux/) return "tmux (clients and servers)"
	if (c ~ /^(go|compile|link|asm|vet|cgo|gcc|cc1|as|ld|gofmt|staticcheck)$/) return "Go toolchain (build, link, vet)"
	if (c ~ /\.test$/) return "test binaries (go test)"
	if (byname[c] / n[c] >= 0.05) return "harness binaries (node, claude, codex and their threads)"
	return "shells and small tools (sh, git, sleep, …)"
}
{
	c = $1; gsub(/^ +| +$/, "", c)
	t = ($3 + $4) / 100
	byname[c] += t; n[c]++; total += t; procs++
}
END {
	for (c in byname) { bygroup[group(c)] += byname[c]; ng[group(c)] += n[c] }
	printf "suite-cpu: %d processes ended, %.0f CPU-s between them\n", procs, total
	for (g in bygroup) printf "  %7.1f s  %5.1f %%  %6d processes  %s\n", bygroup[g], 100 * bygroup[g] / total, ng[g], g | "sort -rn"
	close("sort -rn")
	print "suite-cpu: by command (top 15)"
	for (c in byname) printf "  %7.1f s  %6d  %s\n", byname[c], n[c], c | "sort -rn | head -15"
}'
rm -rf "$dir"
exit "$rc"
