package driver

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// dialogScreen is a dialog drawn where the input box was, as Claude Code draws
// its post-upgrade question: one rule above it, no box between two rules.
const dialogScreen = "some earlier reply\n──────\n Try the new fullscreen renderer?\n\n ❯ 1. Yes, try it\n   2. Not now\n\n Enter to confirm · Esc to cancel"

// boxHolding is the idle screen with text in its input box.
func boxHolding(text string) string { return strings.Replace(idleScreen, "> ", "> "+text, 1) }

func heartbeat(t *testing.T, d *Driver) state.Heartbeat {
	t.Helper()
	hb, err := d.S.HeartbeatFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	return hb
}

// TestADialogHoldsTheQueueAndGetsNoKey: with a dialog on the pane instead of
// the input box, a queued message is not pasted and no key goes to the pane;
// the heartbeat says the seat is held and names the dialog by its first
// lines. Once the box is back, the next boundary delivers.
func TestADialogHoldsTheQueueAndGetsNoKey(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	pane.show(dialogScreen)
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("keys went to a dialog: %q", got)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateQueued || st.Attempts != 0 {
		t.Fatalf("m1 under the dialog: %+v", st)
	}
	hb := heartbeat(t, d)
	want := "blocked: the harness shows a dialog: Try the new fullscreen renderer? / ❯ 1. Yes, try it / 2. Not now"
	if hb.Phase != state.PhaseRelay || hb.Waiting != want {
		t.Fatalf("heartbeat under the dialog: phase %q waiting %q, want relay %q", hb.Phase, hb.Waiting, want)
	}

	pane.show(idleScreen)
	submitNow(t, d)
	if got := pane.did(); len(got) != 2 || !strings.Contains(got[0], "msg=m1 ") || got[1] != "keys Enter" {
		t.Fatalf("after the dialog was answered: %q, want the delivery", got)
	}
	if d.phase != machine.Submitting || d.held != "" {
		t.Fatalf("phase %s, held %q after the dialog", d.phase, d.held)
	}
}

// TestAnEnterRetryNeverLandsOnADialog: a dialog comes up after the paste, and
// no evidence comes. No Enter retry goes to it and none is counted (an Enter
// would answer it), the message stays submitting, and the heartbeat names the
// dialog. Once the box is back with the paste in it, Enter is retried.
func TestAnEnterRetryNeverLandsOnADialog(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	sent := len(pane.did())
	pane.show(dialogScreen)
	for range d.Cfg.SubmitRetries + 2 {
		d.onEvidenceTimeout()
	}
	if got := pane.did()[sent:]; len(got) != 0 {
		t.Fatalf("keys went to the dialog: %q", got)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitting {
		t.Fatalf("m1 under the dialog: %+v", st)
	}
	if hb := heartbeat(t, d); !strings.HasPrefix(hb.Waiting, dialogHold+"Try the new fullscreen renderer?") {
		t.Fatalf("heartbeat waiting %q", hb.Waiting)
	}
	pane.show(boxHolding("[Pasted text #1 +3 lines]"))
	d.onEvidenceTimeout()
	if got := pane.did()[sent:]; strings.Join(got, "|") != "keys Enter" {
		t.Fatalf("with the box back: %q, want one Enter retry", got)
	}
	if d.flight == nil || d.flight.enterTries != 1 {
		t.Fatalf("Enter tries %v", d.flight)
	}
}

// TestADraftIsNeitherClearedNorSubmitted: text in the box that pantty did not
// put there holds the queue (no C-u, no paste, no Enter); text that starts with
// pantty's own prefix is its leftover and is cleared before the paste.
func TestADraftIsNeitherClearedNorSubmitted(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	pane.show(boxHolding("a person is typing this"))
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("the driver touched a person's draft: %q", got)
	}
	if hb := heartbeat(t, d); hb.Phase != state.PhaseRelay || hb.Waiting != draftHold {
		t.Fatalf("heartbeat with a draft: phase %q waiting %q", hb.Phase, hb.Waiting)
	}
	pane.show(boxHolding("[pantty] msg=old nonce=0123456789ab from=board mentions=0"))
	submitNow(t, d)
	if got := pane.did(); len(got) != 3 || got[0] != "keys C-u" || !strings.Contains(got[1], "msg=m1 ") || got[2] != "keys Enter" {
		t.Fatalf("over pantty's own leftover: %q, want C-u, the paste, Enter", got)
	}
}

// TestAPasteRefusedAtTheLastLookIsQueuedAgain: the boundary saw an empty box,
// but a person typed before the paste (fillBox looks again): nothing is sent,
// the message goes back to the queue unsent, and the draft then holds it.
func TestAPasteRefusedAtTheLastLookIsQueuedAgain(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	draft := boxHolding("typed just now")
	// The boundary's look and deliver's busy check see the empty box, the
	// paste's own look the draft.
	pane.frames = []string{idleScreen, idleScreen, draft}
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("keys went over the draft: %q", got)
	}
	if d.flight == nil || d.flight.notPasted == "" {
		t.Fatalf("flight %+v: want it marked not pasted", d.flight)
	}
	d.onEvidenceTimeout()
	if st := status(t, d, "m1"); st.State != inbox.StateQueued || d.flight != nil {
		t.Fatalf("m1 after the refused paste: %+v (flight %v)", st, d.flight)
	}
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 || d.held != draftHold {
		t.Fatalf("after the refused paste: %q, held %q", got, d.held)
	}
}

// TestACommandStrandedByADialogIsPanttysOwn: a dialog comes up between the
// command door's paste and its Enter. No Enter goes (the cycle that sent it
// fails, saying why), and once the dialog is answered the command left in the
// box is pantty's own text: cleared before the next paste, not held as a
// person's draft.
func TestACommandStrandedByADialogIsPanttysOwn(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.Ad = boxAdapter{}
	pane.react = map[string]string{"paste": dialogScreen}
	d.startCycle(nil, "test: a boundary pantty chose", "")
	answerWatches(t, d)
	if got := strings.Join(pane.did(), "|"); got != "paste /compact" {
		t.Fatalf("pane actions: %q, want the paste and no Enter onto the dialog", got)
	}
	c, err := d.S.CycleFile().Read()
	if err != nil || c.State != "failed" || !strings.Contains(c.Error, "Enter not sent") {
		t.Fatalf("cycle.toml: %+v, %v", c, err)
	}
	pane.react = nil
	pane.show(boxHolding("/compact"))
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	got := pane.did()[1:]
	if len(got) != 3 || got[0] != "keys C-u" || !strings.Contains(got[1], "msg=m1 ") || got[2] != "keys Enter" {
		t.Fatalf("after the dialog: %q, want the stranded command cleared, then the delivery", got)
	}
}

// TestARequestForAnotherDriverIsRefused: a release addressed to the holder
// recover judged dead reaches the driver a person started since; that
// driver refuses it (owned) and runs on, and answers one addressed to it.
func TestARequestForAnotherDriverIsRefused(t *testing.T) {
	t.Parallel()
	d, _ := idleDriver(t)
	d.Lock = &seat.Lock{Owner: state.Owner{Holder: "h-now"}}
	d.onRequest(state.Request{ID: "c1", Kind: state.CtlRelease, To: "h-judged"})
	res, err := d.S.ResultFile("c1").Read()
	if err != nil || res.OK || !strings.Contains(res.Error, "h-judged") || !strings.Contains(res.Error, "h-now") {
		t.Fatalf("answer to a release for another driver: %+v, %v", res, err)
	}
	if d.exit != nil {
		t.Fatalf("the driver leaves (exit %d) on a release meant for another", *d.exit)
	}
	d.onRequest(state.Request{ID: "c2", Kind: state.CtlRelease, To: "h-now"})
	if res, err := d.S.ResultFile("c2").Read(); err != nil || !res.OK || d.exit == nil {
		t.Fatalf("a release addressed to this driver: %+v, %v, exit %v", res, err, d.exit)
	}
}
