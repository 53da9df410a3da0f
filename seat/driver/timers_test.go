package driver

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// TestTheFlightsTimersFollowItsState pins syncTimers on the driver: after a
// paste the evidence timer runs submit_timeout from the Enter, the evidence
// stops it and starts the turn ceiling from the turn's start, a cancel stops
// both while its pane watches decide, and a cancel that did not hold gives
// the turn its ceiling back; once the message is final neither runs. Each
// line is checked after the loop's own call, as the loop makes it before it
// waits.
func TestTheFlightsTimersFollowItsState(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = busyAdapter{}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d.clock = func() time.Time { return now }
	d.Cfg.SubmitTimeout.Duration, d.Cfg.TurnCeiling.Duration = 5*time.Second, time.Hour
	t.Cleanup(func() { d.evidenceT.stop(); d.ceilingT.stop() })
	check := func(step string, evidence, ceiling time.Time) {
		t.Helper()
		d.syncTimers()
		if (d.evidenceT.C() != nil) != !evidence.IsZero() || !d.evidenceT.at.Equal(evidence) {
			t.Errorf("%s: evidence timer at %v (armed %v), want %v", step, d.evidenceT.at, d.evidenceT.C() != nil, evidence)
		}
		if (d.ceilingT.C() != nil) != !ceiling.IsZero() || !d.ceilingT.at.Equal(ceiling) {
			t.Errorf("%s: ceiling at %v (armed %v), want %v", step, d.ceilingT.at, d.ceilingT.C() != nil, ceiling)
		}
	}
	check("idle", time.Time{}, time.Time{})

	queue(t, d, "m1", "work")
	submitNow(t, d)
	check("pasted", now.Add(5*time.Second), time.Time{})

	now = now.Add(5 * time.Second)
	pane.show(busyScreen)
	d.onEvidenceTimeout() // silent, but the pane shows a turn: wait longer
	check("silent and busy", now.Add(5*time.Second), time.Time{})

	now = now.Add(time.Second)
	started := now
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: started,
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: pane.did()[0][len("paste "):], PromptID: "p1"}})
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitted {
		t.Fatalf("m1 after its evidence: %+v", st)
	}
	check("in its turn", time.Time{}, started.Add(time.Hour))

	// A cancel whose Escape the turn does not stop: no timer while its pane
	// watch decides, the ceiling back once it answered it did not hold.
	answered := false
	d.cancelTurn(inbox.ReasonCancelled, func(error) { answered = true })
	check("cancelling", time.Time{}, time.Time{})
	loopAnswers(t, d, func() bool { return answered })
	check("the cancel did not hold", time.Time{}, started.Add(time.Hour))

	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1"}})
	if st := status(t, d, "m1"); st.State != inbox.StateProcessed {
		t.Fatalf("m1 after its Stop: %+v", st)
	}
	check("final", time.Time{}, time.Time{})
}

// retryingAdapter is busyAdapter for a harness that retries a failed model
// request inside the turn for up to ten minutes (Gemini CLI's budget).
type retryingAdapter struct{ busyAdapter }

func (retryingAdapter) Caps() harness.Capabilities {
	return harness.Capabilities{RetryBudget: 10 * time.Minute}
}

// TestAHarnessRetryIsAWaitInsideTheTurn: a RequestFailed for the turn in
// flight whose error names no means fault (Gemini CLI's provider_retrying)
// leaves the message in its turn but makes the heartbeat name the wait
// (fault transient, "provider retrying"), and moves the ceiling to the
// harness's retry budget after it when that is later; a RetryWentThrough
// (the turn goes on) clears the wait, and so does the turn going through,
// which processes the message once.
func TestAHarnessRetryIsAWaitInsideTheTurn(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = retryingAdapter{}
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	d.clock = func() time.Time { return now }
	start := now
	t.Cleanup(func() { d.evidenceT.stop(); d.ceilingT.stop() })
	queue(t, d, "m1", "work")
	deliverAndTake(t, d, pane, "p1")
	now = now.Add(55 * time.Minute)
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvRequestFailed, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1",
		Error: hookwire.ErrProviderRetrying, LastAssistantMessage: "attempt 2 of a model request"}})
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitted {
		t.Fatalf("m1 during the harness's retries: %+v", st)
	}
	hb, err := d.S.HeartbeatFile().Read()
	if err != nil || hb.Phase != state.PhaseInTurn || hb.Fault != machine.ClassTransient ||
		!strings.Contains(hb.FaultCause, "provider retrying: attempt 2") || !strings.Contains(hb.Waiting, "m1: provider retrying") {
		t.Fatalf("heartbeat during the harness's retries: %+v (%v)", hb, err)
	}
	d.syncTimers()
	if want := now.Add(10 * time.Minute); !d.ceilingT.at.Equal(want) {
		t.Fatalf("ceiling at %v, want the retry budget's end %v (the turn started %v)", d.ceilingT.at, want, start)
	}
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvRetryWentThrough, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1"}})
	if hb, _ := d.S.HeartbeatFile().Read(); hb.Fault != "" || hb.Phase != state.PhaseInTurn || hb.Waiting != "m1" {
		t.Fatalf("the wait outlived the retry that went through: %+v", hb)
	}
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvRequestFailed, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1",
		Error: hookwire.ErrProviderRetrying, LastAssistantMessage: "attempt 2 of a model request"}})
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1"}})
	if st := status(t, d, "m1"); st.State != inbox.StateProcessed {
		t.Fatalf("m1 after its turn went through: %+v", st)
	}
	if hb, _ := d.S.HeartbeatFile().Read(); hb.Fault != "" {
		t.Fatalf("the wait outlived the turn: %+v", hb)
	}
}
