package seat_test

// Turns that do not end well: cancelled, over the ceiling, crashed, refused by
// the provider, or whose Enter was swallowed; and a driver that dies between
// two steps of a delivery. Each message must end in the documented state, and
// what reached the model is read from the simulator's request log.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// waitBusy waits until the pane shows a running turn, so that a cancel acts on
// a turn the harness has really started.
func waitBusy(h *seattest.Harness) {
	h.T.Helper()
	h.WaitFor("the pane to show a running turn", 10*time.Second, func() bool {
		return strings.Contains(h.Screen(), "esc to interrupt")
	})
}

// waitComposerEmpty waits until the pane's input box holds no typed text.
func waitComposerEmpty(h *seattest.Harness) {
	h.T.Helper()
	h.WaitFor("an empty composer", 5*time.Second, func() bool {
		box, ok := seattest.Composer(h.Screen())
		return ok && box == ""
	})
}

// onlyContent returns the content the model got for message id (its one turn).
func onlyContent(t *testing.T, h *seattest.Harness, id string) string {
	t.Helper()
	var got []string
	for _, r := range h.Requests() {
		if r.Kind == "turn" && r.MsgID() == id {
			_, c := envelope(t, r.NewInput)
			got = append(got, c)
		}
	}
	if len(got) != 1 {
		t.Fatalf("message %s reached the model %d times, want once", id, len(got))
	}
	return got[0]
}

func TestCancelSlowTurn(t *testing.T) {
	t.Parallel()
	// The ceiling only bounds the retried turn at the end of the test.
	h := seattest.New(t, "cancel", seattest.TOML(`turn_ceiling = "3s"`))
	h.Start()
	h.Send("slow", "[sim:hang] think about it forever")
	h.WaitState("slow", inbox.StateSubmitted, 10*time.Second)
	waitBusy(h)

	if r := h.Run("seat", "cancel", "cancel"); r.Code != 0 || !strings.Contains(r.Stdout, "slow") {
		t.Fatalf("seat cancel: want exit 0 naming the message, got %s", r)
	}
	st := h.Status("slow")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled {
		t.Fatalf("cancelled message is %s (%s), want failed (cancelled)", st.State, st.Reason)
	}
	if strings.Contains(h.Screen(), "esc to interrupt") {
		t.Fatalf("the turn still runs after a cancel that reported success:\n%s", h.Screen())
	}
	// The harness puts an interrupted prompt back into its input box; pantty
	// must have cleared it, or the next paste would be appended to it.
	waitComposerEmpty(h)
	if r := h.RunStdin("other text", "seat", "send", "cancel", "--id", "slow"); r.Code != 6 || !strings.Contains(r.Stderr, "conflict") {
		t.Fatalf("re-sending a failed message's id with another text: want a conflict (exit 6), got %s", r)
	}

	h.Send("next", "after the cancel")
	h.WaitFinal(10*time.Second, "next")
	if st := h.Status("next"); st.State != inbox.StateProcessed {
		t.Fatalf("the message after a cancel is %s (%s: %s)", st.State, st.Reason, st.Detail)
	}
	if c := onlyContent(t, h, "next"); c != "after the cancel" {
		t.Fatalf("the message after a cancel reached the model as %q (composer not clean?)", c)
	}

	// retry re-queues the failed message; it hangs again and the ceiling ends it.
	if r := h.Run("seat", "retry", "cancel", "slow"); r.Code != 0 {
		t.Fatalf("seat retry: %s", r)
	}
	h.WaitFor("the retried message to be re-delivered and end", 20*time.Second, func() bool {
		st := h.Status("slow")
		return st.Retries == 1 && inbox.Final(st.State)
	})
	st = h.Status("slow")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonCeiling {
		t.Fatalf("the retried hanging message is %s (%s), want failed (ceiling)", st.State, st.Reason)
	}
	if n := h.ModelTurns()["slow"]; n != 2 {
		t.Fatalf("message slow reached the model %d times, want 2 (once, then once after retry)", n)
	}
	// Queue order, not completion order: slow was enqueued before next.
	waitCursor(h, "next", 2)
}

func TestTurnCeilingFailsAHangingTurn(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ceiling", seattest.TOML(`turn_ceiling = "2s"`))
	h.Start()
	h.Send("hang", "[sim:hang] never answers")
	h.Send("after", "answers at once")
	st := h.WaitState("hang", inbox.StateSubmitted, 10*time.Second)
	h.WaitFinal(15*time.Second, "hang")
	end := h.Status("hang")
	if end.State != inbox.StateFailed || end.Reason != inbox.ReasonCeiling {
		t.Fatalf("hanging message is %s (%s), want failed (ceiling)", end.State, end.Reason)
	}
	if took := end.EndedAt.Sub(st.SubmittedAt); took < 2*time.Second || took > 8*time.Second {
		t.Fatalf("the ceiling of 2s ended the turn after %s", took)
	}
	h.WaitFinal(10*time.Second, "after")
	if s := h.Status("after"); s.State != inbox.StateProcessed {
		t.Fatalf("the message after the ceiling is %s (%s)", s.State, s.Reason)
	}
	if c := onlyContent(t, h, "after"); c != "answers at once" {
		t.Fatalf("the next message reached the model as %q", c)
	}
}

func TestCrashMidTurnResubmittedOnceThenLost(t *testing.T) {
	t.Parallel()
	// pane-died can be lost on tmux 3.3a (see tmux.Reap); the driver then learns
	// of the death at its next heartbeat check, so keep that short here.
	h := seattest.New(t, "crash", seattest.TOML(`heartbeat_interval = "1s"`))
	h.Start()
	sessionID := h.Session().ID
	h.Send("boom", "[sim:crash] this turn takes the harness down")
	h.WaitFinal(30*time.Second, "boom")
	st := h.Status("boom")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonLost || st.Resubmits != 1 {
		t.Fatalf("crashing message is %s (%s, resubmits %d), want failed (%s) after one resubmission",
			st.State, st.Reason, st.Resubmits, inbox.ReasonLost)
	}
	var rows []seattest.Request
	for _, r := range h.Requests() {
		if r.MsgID() == "boom" {
			rows = append(rows, r)
		}
	}
	if len(rows) != 2 || rows[0].Resubmit() || !rows[1].Resubmit() {
		t.Fatalf("want the model to get the message twice, the second marked resubmit=1; got %d rows", len(rows))
	}
	for _, r := range rows {
		if r.SessionID != sessionID {
			t.Fatalf("a relaunch changed the session: %s, want %s", r.SessionID, sessionID)
		}
	}

	h.Send("after", "the seat still works")
	h.WaitFinal(20*time.Second, "after")
	if s := h.Status("after"); s.State != inbox.StateProcessed {
		t.Fatalf("message after the crashes is %s (%s: %s)", s.State, s.Reason, s.Detail)
	}
	sess := h.Session()
	if sess.ID != sessionID || sess.Generation != 1 || !sess.Resumed {
		t.Fatalf("session after the crashes: id %s generation %d resumed %v; want %s, 1, true", sess.ID, sess.Generation, sess.Resumed, sessionID)
	}
	for _, r := range h.Requests() {
		if r.MsgID() == "after" && r.SessionID != sessionID {
			t.Fatalf("the next message ran in session %s, want %s", r.SessionID, sessionID)
		}
	}
	waitCursor(h, "after", 2)
}

// TestProviderRefusalLeavesMessageQueued: a StopFailure rate-limit refusal is a
// wait, not a failure. The message is left queued with a not_before taken from
// the reset time, nothing is submitted before it, the cursor does not pass it,
// and after the wait it is delivered again (the marker is in its text, so it is
// refused again: the seat stays in the provider wait).
func TestProviderRefusalLeavesMessageQueued(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "limit")
	h.Start()
	h.Send("first", "before the limit")
	h.WaitFinal(10*time.Second, "first")
	// 10 s, so that the heartbeat is read inside the wait even under load
	// (recover's twin of this test read it after a 2 s wait had ended).
	h.Send("limited", "[sim:429 reset=in 10s] please")
	h.Send("behind", "waits its turn")

	var st inbox.Status
	h.WaitFor("the refusal to be recorded", 10*time.Second, func() bool {
		st = h.Status("limited")
		return st.Attempts == 1 && st.State == inbox.StateQueued && !st.NotBefore.IsZero()
	})
	if st.Reason != "provider-refusal" {
		t.Fatalf("refused message: reason %q, want provider-refusal", st.Reason)
	}
	if wait := time.Until(st.NotBefore); wait > 10*time.Second || wait < -time.Second {
		t.Fatalf("not_before is %s away, want the 10s reset", wait)
	}
	h.WaitFor("the heartbeat to show the provider wait", 5*time.Second, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Phase == state.PhaseProvider
	})

	// After the wait it is delivered again, never before not_before.
	// artifacts/<id>.<attempt>.toml records what each delivery sent, and when.
	var second state.Artifact
	h.WaitFor("the second delivery after the wait", 20*time.Second, func() bool {
		return state.ReadState(filepath.Join(h.Seat().ArtifactsDir(), "limited.2.toml"), &second) == nil
	})
	if second.SentAt.Before(st.NotBefore) {
		t.Fatalf("re-delivered at %s, before not_before %s", second.SentAt, st.NotBefore)
	}

	for _, id := range []string{"limited", "behind"} {
		if s := h.Status(id); s.State == inbox.StateProcessed || inbox.Final(s.State) {
			t.Fatalf("message %s is %s during a provider wait", id, s.State)
		}
	}
	if n := h.ModelTurns()["behind"]; n != 0 {
		t.Fatalf("a message behind the refused one reached the model during the wait")
	}
	if c := h.Cursor(); c.ID != "first" || c.Closed != 1 {
		t.Fatalf("cursor at %s (%d closed), want first (1 closed): it must not pass a queued message", c.ID, c.Closed)
	}
}

func TestSwallowedEnterIsRetried(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "swallow", seattest.TOML(`submit_timeout = "1s"`))
	h.Start()
	h.Send("sw", "[sim:swallow-enter=1] the first Enter is lost")
	h.WaitFinal(15*time.Second, "sw")
	st := h.Status("sw")
	if st.State != inbox.StateProcessed || st.Attempts != 1 {
		t.Fatalf("message is %s after %d paste(s), want processed after 1", st.State, st.Attempts)
	}
	if n := h.ModelTurns()["sw"]; n != 1 {
		t.Fatalf("message reached the model %d times, want 1", n)
	}
	if !strings.Contains(h.DriverLog(), "Enter retry 1 of") {
		t.Fatalf("no Enter retry logged:\n%s", h.DriverLog())
	}
}

// waitCursor waits until cursor.toml names id with closed messages at or
// before it (the driver writes it right after the message's final status).
func waitCursor(h *seattest.Harness, id string, closed int) {
	h.T.Helper()
	var c inbox.Cursor
	h.WaitFor(fmt.Sprintf("cursor.toml at %s (%d closed)", id, closed), 10*time.Second, func() bool {
		var err error
		c, err = h.Seat().CursorFile().Read()
		return err == nil && c.ID == id && c.Closed == closed
	})
}

// TestAdoptedFlightIsSettled puts the inbox and the pane in the state a driver
// killed between two steps of a delivery leaves them in, then restarts it with
// `seat start` (which adopts the live harness). Whatever the step, the message
// reaches the model exactly once and ends processed.
func TestAdoptedFlightIsSettled(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		paste, enter bool
	}{
		{name: "killed after the status write, before the paste"},
		{name: "killed after the paste, before Enter", paste: true},
		{name: "killed after Enter, before the evidence was read", paste: true, enter: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := seattest.New(t, "adopt", loadTOML)
			h.Start()
			h.Send("warm", "the harness is up")
			h.WaitFinal(10*time.Second, "warm")
			h.KillDriver()

			h.Send("m", "in flight when the driver died")
			stored, err := h.Seat().ReadStored("m")
			if err != nil {
				t.Fatal(err)
			}
			sub, err := guard.Guard(stored.Message(), guard.DefaultDispatchFacts)
			if err != nil {
				t.Fatal(err)
			}
			// What deliver() records before it pastes.
			if err := h.Seat().WriteStatus(inbox.Status{ID: "m", State: inbox.StateSubmitting, Attempts: 1, Nonce: sub.Nonce()}); err != nil {
				t.Fatal(err)
			}
			pane := h.Session().PaneID
			if c.paste {
				if err := h.Tmux().Paste(t.Context(), pane, []byte(sub.Text())); err != nil {
					t.Fatal(err)
				}
			}
			if c.enter {
				// Enter once the simulator shows the paste in its input box
				// (the driver's paste settle stands for that). A fixed 50 ms
				// was too short under CI's load (2026-12-04): the Enter went
				// into the paste and no turn ever ran.
				box := sim.Adapter{}.Composer
				h.WaitFor("the paste in the simulator's input box", 5*time.Second, func() bool {
					screen, err := h.Tmux().Capture(t.Context(), pane)
					text, ok := box(screen)
					return err == nil && ok && text != ""
				})
				if err := h.Tmux().SendKeys(t.Context(), pane, "Enter"); err != nil {
					t.Fatal(err)
				}
				h.WaitFor("the harness to answer while no driver runs", 10*time.Second, func() bool {
					return h.ModelTurns()["m"] == 1
				})
			}
			if r := h.Start(); !strings.Contains(r.Stdout, "adopted") {
				t.Fatalf("restart did not adopt the harness: %s", r)
			}
			h.WaitFinal(20*time.Second, "m")
			if st := h.Status("m"); st.State != inbox.StateProcessed {
				t.Fatalf("message is %s (%s: %s), want processed\ndriver.log:\n%s", st.State, st.Reason, st.Detail, h.DriverLog())
			}
			if n := h.ModelTurns()["m"]; n != 1 {
				t.Fatalf("message reached the model %d times, want 1", n)
			}
			waitCursor(h, "m", 2)
		})
	}
}

// TestCursorCaughtUpAtStart: a driver killed after it wrote a message's final
// status but before it moved the cursor leaves cursor.toml behind; the next
// driver brings it up to date without waiting for another message.
func TestCursorCaughtUpAtStart(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cursor", loadTOML)
	h.Start()
	h.Send("m1", "one")
	h.Send("m2", "two")
	h.WaitFinal(10*time.Second, "m1", "m2")
	h.KillDriver()
	stale := h.Cursor()
	stale.ID, stale.Closed = "m1", 1
	es, _ := h.Seat().Entries()
	stale.Seq = es[0].Msg.Seq
	if err := h.Seat().CursorFile().Write(stale); err != nil {
		t.Fatal(err)
	}
	h.Start()
	waitCursor(h, "m2", 2)
}

// TestCancelRightAfterEnter: a cancel that arrives after Enter was accepted but
// before the harness shows the turn (PANTTY_SIM_SUBMIT stretches that window)
// must still stop the turn. Before: the pane looked idle, nothing was sent but
// C-u, the message was failed "cancelled", and the model then ran the turn to
// its end anyway ("failed but ran").
func TestCancelRightAfterEnter(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cancelearly", seattest.Env(map[string]string{"PANTTY_SIM_SUBMIT": "1500ms"}))
	h.Start()
	h.Send("early", "[sim:slow=3s] cancelled before the turn shows")
	h.WaitFor("the paste and its Enter (state submitting)", 10*time.Second, func() bool {
		return h.Status("early").State == inbox.StateSubmitting && strings.Contains(h.Screen(), "> [pantty] msg=early")
	})
	if r := h.Run("seat", "cancel", "cancelearly"); r.Code != 0 {
		t.Fatalf("seat cancel: %s\n%s", r, h.DriverLog())
	}
	if st := h.Status("early"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled {
		t.Fatalf("early is %s (%s), want failed (cancelled)", st.State, st.Reason)
	}
	time.Sleep(6 * time.Second) // longer than the turn would take
	s := h.Seat()
	cfg, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	ran, where, err := sim.Adapter{}.FindTurn(s, cfg, h.Session().ID, "early", h.Status("early").Nonce)
	if err != nil || ran {
		t.Fatalf("the cancelled message's turn ran to its end (%s, %v): failed but ran\n%s", where, err, h.DriverLog())
	}
}
