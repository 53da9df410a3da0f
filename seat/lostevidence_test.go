package seat_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// Regression tests for what the soak found (docs/reliability.md): a hook event
// lost while its turn ran (the `pantty hook` process killed mid-write). The
// harness's hooks run the driver's own binary; here that binary is swapped,
// after the seat started, for a wrapper that drops one event of one message —
// a hook that died before it wrote — and passes everything else through.

// lossyHooks starts h from a copy of the pantty binary, then replaces the copy
// with a wrapper that swallows the hook event named event for a payload that
// mentions msgID.
func lossyHooks(t *testing.T, h *seattest.Harness, event, msgID string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(h.Home), "bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(h.Bin)
	if err != nil {
		t.Fatal(err)
	}
	realPath := filepath.Join(dir, "pantty.real")
	if err := tmuxtest.WriteExecutable(realPath, real); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "pantty")
	if err := tmuxtest.WriteExecutable(copyPath, real); err != nil {
		t.Fatal(err)
	}
	h.Bin = copyPath
	h.Start()
	wrapper := `#!/bin/sh
for a in "$@"; do
	if [ "$a" = hook ]; then
		payload=$(cat)
		case "$payload" in *'"hook_event_name":"` + event + `"'*)
			case "$payload" in *'msg=` + msgID + ` '*) exit 0 ;; esac ;;
		esac
		printf '%s' "$payload" | exec ` + realPath + ` "$@"
	fi
done
exec ` + realPath + ` "$@"
`
	if err := tmuxtest.WriteExecutable(copyPath+".new", []byte(wrapper)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyPath+".new", copyPath); err != nil {
		t.Fatal(err)
	}
}

// Before: no UserPromptSubmit evidence → three Enter retries → failed
// "undelivered", although the model had processed it.
func TestLostPromptEvidenceIsSettledByTheTranscript(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "lostups", seattest.TOML(`submit_timeout = "1s"`))
	lossyHooks(t, h, "UserPromptSubmit", "lost-1")
	h.Send("lost-1", "the evidence of this one is lost")
	h.Send("after-1", "and this one comes after")
	h.WaitFinal(30*time.Second, "lost-1", "after-1")
	st := h.Status("lost-1")
	if st.State != inbox.StateProcessed || !strings.HasPrefix(st.TurnEnd, "transcript:") {
		t.Fatalf("lost-1: %s %s (turn end %q), want processed from the transcript\n%s", st.State, st.Reason, st.TurnEnd, h.DriverLog())
	}
	if n := h.ModelTurns(); n["lost-1"] != 1 || n["after-1"] != 1 {
		t.Fatalf("model turns %v, want exactly one each", n)
	}
}

// Before: a new driver inherits the paste with no evidence, retries Enter, then
// re-queues it as "never reached the model" — and the model processed it twice.
func TestLostPromptEvidenceAcrossADriverRestartIsNotDeliveredTwice(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "lostre", seattest.TOML(`submit_timeout = "4s"`))
	lossyHooks(t, h, "UserPromptSubmit", "lost-2")
	h.Send("lost-2", "[sim:slow=300ms] the evidence of this one is lost")
	h.WaitFor("its turn to reach the model", 20*time.Second, func() bool { return h.ModelTurns()["lost-2"] == 1 })
	time.Sleep(time.Second) // the turn ends; the driver still waits for evidence (submit_timeout 4s)
	if st := h.Status("lost-2"); st.State != inbox.StateSubmitting {
		t.Fatalf("lost-2 is %s before the driver's evidence timeout", st.State)
	}
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver to die", 10*time.Second, func() bool { return !procid.Alive(o.PID, o.PIDStart) })
	h.Start()
	h.WaitFinal(40*time.Second, "lost-2")
	if st := h.Status("lost-2"); st.State != inbox.StateProcessed {
		t.Fatalf("lost-2: %s %s, want processed\n%s", st.State, st.Reason, h.DriverLog())
	}
	time.Sleep(2 * time.Second) // a wrong re-queue would paste it again now
	if n := h.ModelTurns()["lost-2"]; n != 1 {
		t.Fatalf("the model processed lost-2 %d times\n%s", n, h.DriverLog())
	}
}

// Before: the Stop never comes, and the message (and the queue behind it) waits
// for its turn ceiling, then fails "ceiling" although it was processed.
func TestLostStopIsSettledByTheTranscriptBeforeTheCeiling(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "loststop", seattest.TOML(`heartbeat_interval = "1s"`, `turn_ceiling = "10m"`))
	lossyHooks(t, h, "Stop", "lost-3")
	h.Send("lost-3", "the end of this turn is never reported")
	h.Send("after-3", "and this one waits behind it")
	h.WaitFinal(30*time.Second, "lost-3", "after-3")
	st := h.Status("lost-3")
	if st.State != inbox.StateProcessed || !strings.HasPrefix(st.TurnEnd, "transcript:") {
		t.Fatalf("lost-3: %s %s (turn end %q), want processed from the transcript\n%s", st.State, st.Reason, st.TurnEnd, h.DriverLog())
	}
	if n := h.ModelTurns(); n["lost-3"] != 1 || n["after-3"] != 1 {
		t.Fatalf("model turns %v, want exactly one each", n)
	}
}

// Before: a lost UserPromptSubmit event and then a harness crash in the same
// turn re-queued the paste as "never reached the model", and the model saw it
// twice, the second time unmarked. The harness had recorded the prompt, so the
// driver now resubmits it once, marked.
func TestLostPromptEvidenceAndACrashInTheSameTurnResubmitsMarked(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "lostcrash", seattest.TOML(`submit_timeout = "3s"`))
	lossyHooks(t, h, "UserPromptSubmit", "lost-4")
	h.Send("lost-4", "[sim:slow=5s] the evidence of this one is lost, then its harness")
	h.WaitFor("its turn to reach the model", 20*time.Second, func() bool { return h.ModelTurns()["lost-4"] == 1 })
	if st := h.Status("lost-4"); st.State != inbox.StateSubmitting {
		t.Fatalf("lost-4 is %s while its evidence is missing, want submitting", st.State)
	}
	pids := h.HarnessPIDs()
	if len(pids) == 0 {
		t.Fatal("no harness process to kill")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	h.WaitFinal(60*time.Second, "lost-4")
	st := h.Status("lost-4")
	if st.State != inbox.StateProcessed || st.Resubmits != 1 {
		t.Fatalf("lost-4: %s %s, %d resubmissions; want processed after one marked resubmission\n%s", st.State, st.Reason, st.Resubmits, h.DriverLog())
	}
	var headers []string
	for _, rq := range h.Requests() {
		if rq.Kind == "turn" && rq.MsgID() == "lost-4" {
			headers = append(headers, strings.SplitN(rq.NewInput, "\n", 2)[0])
		}
	}
	if len(headers) != 2 || strings.Contains(headers[0], "resubmit=1") || !strings.Contains(headers[1], "resubmit=1") {
		t.Fatalf("lost-4 reached the model as %q: want the original, then one resubmission marked resubmit=1", headers)
	}
}
