package driver

import (
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// maxReprobe caps the driver's own re-probe interval, whatever [recovery]
// backoff_max says: a key fixed or a provider back is noticed within this.
const maxReprobe = 10 * time.Minute

// heldOutage is a failure of the seat's means or of its provider that is not the
// message's fault: the class, the cause in the harness's words, since when, how
// many probes failed in a row and when the next one goes. It lives in the driver
// (a new driver probes at once: its start is a probe) and is published in the
// heartbeat, where status and recover read it.
type heldOutage struct {
	class, cause   string
	since, probeAt time.Time
	failures       int
}

// onTurnFailed decides a turn the harness ended on an error by the error's class
// (ClassifyFailure, then machine.AfterFailure): an outage or a refusal holds
// the message (or, its transient attempts spent, fails it and keeps the
// outage). It reports false for a work failure, which the caller fails as the
// message's own.
func (d *Driver) onTurnFailed(e *inbox.Entry, errName, text string) bool {
	class, cause := hookwire.ClassifyFailure(errName, state.Redact(text))
	switch machine.AfterFailure(machine.Failure{Class: machine.Class(class), Transients: e.Status.Transients,
		Attempts: d.Cfg.Recovery.TransientAttempts}) {
	case machine.HoldForOutage:
		d.outageFailed(e, class, cause, false)
	case machine.GiveUpTransient:
		d.outageFailed(e, class, cause, true)
	case machine.WaitForProvider:
		// The provider answered, refusing the account: the means work.
		d.outage = nil
		d.providerRefused(e, errName, text)
	default:
		return false
	}
	if d.Cfg.Shape != config.ShapeTurn {
		d.clearComposer() // the "Resend your message" placeholder, or a put-back prompt
	}
	return true
}

// outageFailed records the outage and its next probe: the backoff of
// [recovery] (backoff, doubling per failed probe, capped by backoff_max and
// maxReprobe). The message goes back to the head of the queue and is itself
// the probe, unless it has spent its transient attempts (machine.AfterFailure):
// then it fails and the outage stays, so the next message waits for the probe
// time as this one would have. A means failure makes the seat report itself
// dead (heartbeat fault, read by recover); a transient one is only a visible
// wait.
func (d *Driver) outageFailed(e *inbox.Entry, class, cause string, spent bool) {
	now := d.now()
	o := d.outage
	if o == nil || o.class != class {
		o = &heldOutage{class: class, since: now}
		d.outage = o
	}
	o.cause = cause
	o.failures++
	o.probeAt = now.Add(reprobeAfter(d.Cfg.Recovery, o.failures))
	reason, ev := hookwire.ReasonTransient, machine.RequestFailed
	if class == hookwire.FailMeans {
		reason, ev = hookwire.ReasonMeansFault, machine.MeansLost
	} else {
		e.Status.Transients++
	}
	if spent {
		d.logf("message %s: %d provider errors in a row, the last: %s", e.Msg.ID, e.Status.Transients, cause)
		d.finish(e, inbox.StateFailed, hookwire.ReasonTransientExhausted,
			fmt.Sprintf("%s (%d attempts; 'pantty seat retry %s %s' queues it again)", cause, e.Status.Transients, d.S.Name, e.Msg.ID), "")
		d.to(ev, d.outageText())
		return
	}
	e.Status.NotBefore = o.probeAt.UTC()
	e.Status.Reason = reason
	d.requeue(e, cause)
	d.logf("message %s back in the queue (%s): %s; probe %d at %s", e.Msg.ID, class, cause, o.failures+1, o.probeAt.Format(time.RFC3339))
	d.to(ev, d.outageText())
}

// outageText is the heartbeat's waiting for an outage: the cause in the
// harness's words and the next probe.
func (d *Driver) outageText() string {
	o := d.outage
	return fmt.Sprintf("%s; %d failed in a row since %s, next probe %s", o.cause, o.failures,
		o.since.UTC().Format(time.RFC3339), o.probeAt.UTC().Format(time.RFC3339))
}

// reprobeAfter is the wait before probe n+1 after n failed ones.
func reprobeAfter(rc config.RecoveryConfig, failures int) time.Duration {
	limit := min(rc.BackoffMax.Duration, maxReprobe)
	wait := rc.Backoff.Duration << min(failures-1, 20)
	if wait <= 0 || wait > limit {
		wait = limit
	}
	return wait
}

// holdForOutage reports whether the queue is held for an outage's next probe,
// arming the wait timer for it.
func (d *Driver) holdForOutage(now time.Time) bool {
	o := d.outage
	if o == nil || !now.Before(o.probeAt) {
		return false
	}
	d.waitT.set(o.probeAt.Sub(now))
	return true
}

// outageOver forgets the outage once a turn went through: the means or the
// provider are back.
func (d *Driver) outageOver() {
	if d.outage == nil {
		return
	}
	d.logf("outage over (%s since %s, %d failed probes): a turn went through", d.outage.class,
		d.outage.since.UTC().Format(time.RFC3339), d.outage.failures)
	d.outage = nil
}

// onRequestFailed takes a failed model request inside a turn the harness keeps
// running (Codex retries a lost connection by itself, "Reconnecting… waiting for
// network", and the turn ends only when it is back): nothing is re-queued —
// the turn's own end settles the message — but a means failure is published
// like any outage, so status and recover say why the turn does not end.
func (d *Driver) onRequestFailed(ev hookwire.Event) {
	f := ev.Fields
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitted || !d.sessionMatches(f.SessionID) ||
		f.PromptID != "" && f.PromptID != fl.e.Status.PromptID {
		return
	}
	class, cause := hookwire.ClassifyFailure(f.Error, state.Redact(f.LastAssistantMessage))
	if class != hookwire.FailMeans {
		return
	}
	now := d.now()
	if d.outage == nil || d.outage.class != class {
		d.outage = &heldOutage{class: class, since: now}
	}
	d.outage.cause = cause + " (the harness retries the turn by itself)"
	d.outage.failures++
	d.outage.probeAt = now
	d.logf("message %s: %s", fl.e.Msg.ID, d.outage.cause)
	d.to(machine.HarnessRetries, fl.e.Msg.ID+": "+d.outage.cause)
}
