package seat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// The simulator's dialog (harness/sim/dialog.go) as the pane shows it.
const simDialog = "Try the new fullscreen renderer?"

func heartbeat(t *testing.T, h *seattest.Harness) state.Heartbeat {
	t.Helper()
	hb, err := h.Seat().HeartbeatFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	return hb
}

// personTypes sends keys to the seat's pane as a person's script does
// (tmux send-keys, no client attached).
func personTypes(t *testing.T, h *seattest.Harness, literal bool, keys string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if literal {
		err = h.Tmux().SendLiteral(ctx, h.Session().PaneID, keys)
	} else {
		err = h.Tmux().SendKeys(ctx, h.Session().PaneID, keys)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// heldIsAnEvent checks that pantty events shows the hold: a mode line
// (mode dialog or draft) whose why starts with why.
func heldIsAnEvent(t *testing.T, h *seattest.Harness, mode, why string) {
	t.Helper()
	r := h.Run("events", "--seat", h.Name, "--settle", "0")
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.Contains(l, `"type":"mode"`) && strings.Contains(l, `"mode":"`+mode+`"`) && strings.Contains(l, `"why":"`+why) {
			return
		}
	}
	t.Fatalf("pantty events shows no held mode (%q): %s", why, r)
}

// requestOf is the request that carried message id to the model.
func requestOf(t *testing.T, h *seattest.Harness, id string) seattest.Request {
	t.Helper()
	for _, r := range h.Requests() {
		if r.Kind == "turn" && r.MsgID() == id {
			return r
		}
	}
	t.Fatalf("no request carried %s", id)
	return seattest.Request{}
}

// A dialog stands where the input box should be when the harness comes up
// (Claude Code after an upgrade). seat start does not say started: it names
// the dialog and the fix; status and the heartbeat name it; no key reaches the
// pane while it is up (the simulator logs every key its dialog gets). A person
// answers it, and the message queued meanwhile reaches the model exactly once.
//
// Two cases: the dialog comes after SessionStart (Claude Code's post-upgrade
// question: the driver gives up looking for the box after 5 s), or before it
// (its folder-trust question: no SessionStart until it is answered, so the
// start hears it at ready_timeout, and the harness is kept, not killed).
func TestADialogAtStartHoldsTheSeatAndGetsNoKey(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"start", "before"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			dialogAtStart(t, when)
		})
	}
}

func dialogAtStart(t *testing.T, when string) {
	h := seattest.New(t, "dlg"+when, seattest.Env(map[string]string{"PANTTY_SIM_DIALOG": when}),
		seattest.TOML(`heartbeat_interval = "300ms"`, `ready_timeout = "4s"`))
	h.Send("q1", "queued before the start")
	r := h.Run("seat", "start", h.Name)
	if r.Code != 1 || strings.Contains(r.Stdout, "started") || !strings.Contains(r.Stderr, "did not start") ||
		!strings.Contains(r.Stderr, simDialog) || !strings.Contains(r.Stderr, "pantty seat attach "+h.Name) {
		t.Fatalf("seat start over a dialog: want exit 1 naming the dialog and the fix, not started; got %s", r)
	}
	hb := heartbeat(t, h)
	if hb.Phase != state.PhaseRelay || !strings.HasPrefix(hb.Waiting, "blocked: the harness shows a dialog: "+simDialog) {
		t.Fatalf("heartbeat: phase %q waiting %q", hb.Phase, hb.Waiting)
	}
	if st := h.Run("status", h.Name); !strings.Contains(st.Stdout, "blocked: the harness shows a dialog: "+simDialog) {
		t.Fatalf("status does not name the dialog: %s", st)
	}
	heldIsAnEvent(t, h, state.ModeDialog, "blocked: the harness shows a dialog: "+simDialog)
	if rec := h.Run("recover", "--dry-run", "--json"); !strings.Contains(rec.Stdout, `"verdict": "ok"`) ||
		!strings.Contains(rec.Stdout, "blocked: the harness shows a dialog: "+simDialog) {
		t.Fatalf("recover does not report the seat ok and held by the dialog: %s", rec)
	}
	beats(h, 3)
	if keys := h.DialogKeys(); len(keys) != 0 {
		t.Fatalf("keys reached the dialog: %+v", keys)
	}
	if st := h.Status("q1"); st.State != inbox.StateQueued || st.Attempts != 0 {
		t.Fatalf("q1 under the dialog: %+v", st)
	}

	answered := time.Now()
	personTypes(t, h, true, "2") // "Not now", as a person answers it
	h.WaitFinal(30*time.Second, "q1")
	if turns := h.ModelTurns(); turns["q1"] != 1 || h.Status("q1").State != inbox.StateProcessed {
		t.Fatalf("after the dialog: turns %v, q1 %+v", turns, h.Status("q1"))
	}
	t.Logf("dialog answered → q1 reached the model in %s", requestOf(t, h, "q1").At().Sub(answered).Round(time.Millisecond))
	if d := requestOf(t, h, "q1").At().Sub(answered); d > 2*time.Second {
		t.Log(h.DriverLog())
	}
	if keys := h.DialogKeys(); len(keys) != 1 || keys[0].Text != "2" {
		t.Fatalf("the dialog got %+v, want only the person's 2", keys)
	}
}

// A dialog that comes up between two messages (here after the first one's
// turn) holds the queue and never gets an Enter, a paste or a C-u; answered,
// the next message goes once.
func TestADialogMidLifeHoldsTheQueueAndGetsNoEnter(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "dlgmid", seattest.TOML(`heartbeat_interval = "300ms"`))
	h.Start()
	h.Send("m1", "first, then a dialog [sim:dialog]")
	h.WaitFinal(30*time.Second, "m1")
	h.WaitFor("the dialog on the pane", 10*time.Second, func() bool { return strings.Contains(h.Screen(), simDialog) })
	h.Send("m2", "second, while the dialog is up")
	h.WaitFor("the dialog in the heartbeat", 10*time.Second, func() bool {
		return strings.HasPrefix(heartbeat(t, h).Waiting, "blocked: the harness shows a dialog: "+simDialog)
	})
	beats(h, 3)
	if keys := h.DialogKeys(); len(keys) != 0 {
		t.Fatalf("keys reached the dialog: %+v", keys)
	}
	if st := h.Status("m2"); st.State != inbox.StateQueued || st.Attempts != 0 || h.ModelTurns()["m2"] != 0 {
		t.Fatalf("m2 under the dialog: %+v", st)
	}
	answered := time.Now()
	personTypes(t, h, false, "Escape")
	h.WaitFinal(30*time.Second, "m2")
	if turns := h.ModelTurns(); turns["m1"] != 1 || turns["m2"] != 1 {
		t.Fatalf("turns %v, want m1 and m2 once each", turns)
	}
	t.Logf("dialog answered → m2 reached the model in %s", requestOf(t, h, "m2").At().Sub(answered).Round(time.Millisecond))
	if keys := h.DialogKeys(); len(keys) != 1 || keys[0].Key != "escape" {
		t.Fatalf("the dialog got %+v, want only the person's Escape", keys)
	}
}

// A person's draft, typed into the box by a script with no client attached
// (so no relay), is never cleared nor submitted: the queue holds, and the
// heartbeat says so. When the box is cleared, the pane change is the wake-up:
// the message goes within about a second, with the heartbeat 20 s apart. The
// draft never reaches the model.
func TestAPersonsDraftIsNeverWipedNorSubmitted(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "draftbox", seattest.TOML(`heartbeat_interval = "20s"`))
	h.Start()
	const draft = "a person's unsent thought"
	personTypes(t, h, true, draft)
	h.WaitFor("the draft in the box", 10*time.Second, func() bool {
		box, ok := seattest.Composer(h.Screen())
		return ok && box == draft
	})
	h.Send("b1", "board work")
	h.WaitFor("the draft to hold the queue", 10*time.Second, func() bool {
		return heartbeat(t, h).Waiting == "held: a draft in the input box"
	})
	if hb := heartbeat(t, h); hb.Phase != state.PhaseRelay {
		t.Fatalf("heartbeat phase %q with a draft", hb.Phase)
	}
	if m := mode(h); m.Mode != state.ModeDraft || m.Draft != draft {
		t.Fatalf("mode %+v: want draft, with the draft kept (no client is attached)", m)
	}
	heldIsAnEvent(t, h, state.ModeDraft, "held: a draft in the input box")
	// Give the driver a chance to act wrongly: another message, sent by a
	// script that waits a second for it and hears why it does not go.
	w := h.RunStdin("more board work", "seat", "send", h.Name, "--id", "b2", "--wait", "--timeout", "1s")
	if w.Code != 4 || !strings.Contains(w.Stderr, "is held: ") || !strings.Contains(w.Stderr, "held: a draft in the input box") {
		t.Fatalf("send --wait on a held seat: want exit 4 saying it is held; got %s", w)
	}
	if box, ok := seattest.Composer(h.Screen()); !ok || box != draft {
		t.Fatalf("the draft was touched: the box holds %q", box)
	}
	for _, id := range []string{"b1", "b2"} {
		if st := h.Status(id); st.State != inbox.StateQueued || st.Attempts != 0 {
			t.Fatalf("%s while the draft is in the box: %+v", id, st)
		}
	}

	cleared := time.Now()
	personTypes(t, h, false, "C-u")
	h.WaitFor("b1 at the model", 10*time.Second, func() bool { return h.ModelTurns()["b1"] == 1 })
	took := requestOf(t, h, "b1").At().Sub(cleared)
	t.Logf("box cleared → b1 reached the model in %s", took.Round(time.Millisecond))
	if took > 1500*time.Millisecond {
		t.Errorf("b1 reached the model %s after the box was cleared: the release waited for something other than the pane change", took)
	}
	h.WaitFinal(30*time.Second, "b1", "b2")
	for _, r := range h.Requests() {
		if strings.Contains(r.NewInput, draft) {
			t.Fatalf("the draft reached the model: %q", r.NewInput)
		}
	}
	if turns := h.ModelTurns(); turns["b1"] != 1 || turns["b2"] != 1 {
		t.Fatalf("turns %v", turns)
	}
}
