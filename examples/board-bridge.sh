#!/bin/sh
# board-bridge.sh SEAT SPOOL — a board bridge in plain shell: task files in,
# result files out, through `pantty seat send --wait`.
#
#   SPOOL/in/ID.task       a task: the whole file is one message, ID its id
#                          (write it elsewhere in SPOOL and mv it here, so the
#                          bridge never reads half a file)
#   SPOOL/work/ID.task     claimed: sent, waiting for its result
#   SPOOL/out/ID.result    the model's reply            (send exit 0)
#   SPOOL/out/ID.failed    why the message failed       (exit 1)
#   SPOOL/out/ID.refused   why pantty refused the task  (exit 2: bad id, control bytes, ...)
#   SPOOL/out/ID.conflict  the id is stored with another text (exit 6): not sent
#   SPOOL/done/ID.task     the task, once its result is out
#
# A seat or state root pantty does not know (exit 5: a mistyped SEAT or
# PANTTY_HOME) stops the pass at once with exit 5: nothing is marked done or
# refused, and the claimed tasks wait in work/ for a pass with the right name.
#
# One pass over in/ and work/, then exit: run it from cron, a systemd path unit,
# or `inotifywait -m SPOOL/in | while read -r _; do board-bridge.sh ...; done`.
# It is safe to run again at any time, and after a crash: a task left in work/
# is sent again with the same id, which pantty stores once (a duplicate), so
# the second run only waits for the first one's result. A task not final
# within BRIDGE_TIMEOUT (default 30m) stays in work/ for the next pass.
#
# Needs only pantty on PATH (or PANTTY=/path/to/pantty) and POSIX sh.
set -u

seat=${1:?usage: board-bridge.sh SEAT SPOOL}
spool=${2:?usage: board-bridge.sh SEAT SPOOL}
pantty=${PANTTY:-pantty}
timeout=${BRIDGE_TIMEOUT:-30m}

mkdir -p "$spool/in" "$spool/work" "$spool/out" "$spool/done" "$spool/tmp" || exit 1

# Claim new tasks first (a rename: atomic within the spool's file system).
for f in "$spool"/in/*.task; do
	[ -e "$f" ] || continue
	mv "$f" "$spool/work/" || exit 1
done

status=0
for f in "$spool"/work/*.task; do
	[ -e "$f" ] || continue
	id=$(basename "$f" .task)
	tmp="$spool/tmp/$id"
	"$pantty" seat send "$seat" --id "$id" --wait --timeout "$timeout" <"$f" >"$tmp.out" 2>"$tmp.err"
	code=$?
	case $code in
	0) kind=result src=$tmp.out ;;
	1) kind=failed src=$tmp.err ;;
	2) kind=refused src=$tmp.err ;;
	6) kind=conflict src=$tmp.err ;;
	5) # No such seat or state root: no task can go anywhere this pass.
		echo "board-bridge: $(tail -n 1 "$tmp.err")" >&2
		rm -f "$tmp.out" "$tmp.err"
		exit 5 ;;
	*) # 4: not final yet or unknown; 3 cannot happen for send. Next pass.
		echo "board-bridge: $id: $(tail -n 1 "$tmp.err")" >&2
		rm -f "$tmp.out" "$tmp.err"
		status=4
		continue ;;
	esac
	# Result first, then the task: a crash in between re-sends (a duplicate) and
	# rewrites the same result.
	mv "$src" "$spool/out/$id.$kind" && mv "$f" "$spool/done/" || exit 1
	rm -f "$tmp.out" "$tmp.err"
done
exit $status
