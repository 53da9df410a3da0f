package driver

import (
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/flight"
)

// inputReadyLimit bounds the look for the input box after SessionStart.
const inputReadyLimit = 5 * time.Second

// paneAnswer is one watch's answer, for the launch it watched.
type paneAnswer struct {
	launch time.Time // Driver.launchAt when the watch began
	ok     bool
	then   func(ok bool)
}

// watchPane waits on the pane as w says (flight.Await, in a goroutine of
// its own: the loop goes on meanwhile), then runs then on the loop with the
// answer, unless the harness was launched again meanwhile (the answer is
// about a pane that is gone, and the new launch watches for itself).
func (d *Driver) watchPane(w flight.Wait, then func(ok bool)) {
	if d.paneDone == nil {
		d.paneDone = make(chan paneAnswer, 4)
	}
	pane, launch, done := d.pane(), d.launchAt, d.paneDone
	d.watching++
	go func() { done <- paneAnswer{launch: launch, ok: flight.Await(pane, w), then: then} }()
}

// onPaneAnswer runs a watch's continuation on the loop.
func (d *Driver) onPaneAnswer(a paneAnswer) {
	d.watching--
	if !a.launch.Equal(d.launchAt) {
		return
	}
	a.then(a.ok)
}

// syncTimers sets the flight's two timers from the state they belong to
// (machine.Deadlines): the evidence timer while a pasted message awaits its
// submission evidence, the turn ceiling while its turn runs, neither while a
// cancel decides. The loop calls it before every wait, so a handler changes
// the state and never arms or stops these timers itself (before, they were
// set or stopped by hand in six files, and a path that forgot left a message
// with no timer at all).
func (d *Driver) syncTimers() {
	var f machine.Flight
	if fl := d.flight; fl != nil {
		st := fl.e.Status
		f = machine.Flight{Submitting: st.State == inbox.StateSubmitting, Submitted: st.State == inbox.StateSubmitted,
			Cancelling: d.cancel != nil && d.cancel.fl == fl, TurnShape: d.Cfg.Shape == config.ShapeTurn,
			LookFrom: fl.lookFrom, SubmittedAt: st.SubmittedAt, CeilingSpent: fl.ceilingSpent,
			RetryingSince: fl.retryingSince, RetryBudget: d.Ad.Caps().RetryBudget}
	}
	evidence, ceiling := machine.Deadlines(f, d.Cfg.SubmitTimeout.Duration, d.Cfg.TurnCeiling.Duration)
	now := d.now()
	d.evidenceT.setAt(evidence, now)
	d.ceilingT.setAt(ceiling, now)
}

// timer is a stoppable one-shot whose channel is nil while it is not armed, so a
// select on it waits forever instead of firing a stale tick.
type timer struct {
	t  *time.Timer
	at time.Time // the deadline setAt armed it for; zero after set or stop
}

func (t *timer) C() <-chan time.Time {
	if t.t == nil {
		return nil
	}
	return t.t.C
}

func (t *timer) set(d time.Duration) {
	t.stop()
	t.t = time.NewTimer(d)
}

// setAt makes the timer fire at the deadline at (now on the driver's clock),
// or stops it when at is zero; a timer already armed for at is left as it is.
func (t *timer) setAt(at, now time.Time) {
	switch {
	case at.IsZero():
		t.stop()
	case t.t == nil || !t.at.Equal(at):
		t.set(max(at.Sub(now), 0))
		t.at = at
	}
}

func (t *timer) stop() {
	if t.t != nil {
		t.t.Stop()
		t.t = nil
	}
	t.at = time.Time{}
}
