package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
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
	class          machine.Class
	cause          string
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
	switch machine.AfterFailure(machine.Failure{Class: class, Transients: e.Status.Transients,
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
func (d *Driver) outageFailed(e *inbox.Entry, class machine.Class, cause string, spent bool) {
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
	if class == machine.ClassMeans {
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
// network", and the turn ends only when it is back; Gemini CLI retries a 429
// or a 5xx, its hooks seeing only the attempts): nothing is re-queued — the
// turn's own end settles the message — but the failure is published like any
// outage (the heartbeat's fault and waiting), so status and recover say why
// the turn does not end, and the turn ceiling grants the harness's retry
// budget from the first such failure. A turn that then goes through clears it
// (finish, outageOver).
func (d *Driver) onRequestFailed(ev hookwire.Event) {
	f := ev.Fields
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitted || !d.sessionMatches(f.SessionID) ||
		f.PromptID != "" && f.PromptID != fl.e.Status.PromptID {
		return
	}
	class, cause := hookwire.ClassifyFailure(f.Error, state.Redact(f.LastAssistantMessage))
	if class == machine.ClassWork {
		return
	}
	now := d.now()
	if fl.retryingSince.IsZero() {
		fl.retryingSince = now
	}
	if d.outage == nil || d.outage.class != class {
		d.outage = &heldOutage{class: class, since: now}
	}
	if class == machine.ClassMeans {
		cause += " (the harness retries the turn by itself)"
	}
	d.outage.cause = cause
	d.outage.failures++
	d.outage.probeAt = now
	d.logf("message %s: %s", fl.e.Msg.ID, d.outage.cause)
	d.to(machine.HarnessRetries, fl.e.Msg.ID+": "+d.outage.cause)
}

// onRetryWentThrough ends the wait onRequestFailed published once a request
// the harness retried went through and the turn goes on (Gemini's next tool
// ran): the heartbeat stops naming the failure. The ceiling keeps the retry
// budget it granted.
func (d *Driver) onRetryWentThrough(ev hookwire.Event) {
	f := ev.Fields
	fl := d.flight
	if fl == nil || fl.retryingSince.IsZero() || d.outage == nil || fl.e.Status.State != inbox.StateSubmitted ||
		!d.sessionMatches(f.SessionID) || f.PromptID != "" && f.PromptID != fl.e.Status.PromptID {
		return
	}
	d.outageOver()
	if d.phase == machine.InTurn {
		d.to(machine.RetryWentThrough, fl.e.Msg.ID)
	} else {
		d.beat()
	}
}

// followLadder keeps the harness on the running rung and applies provider
// waits; it runs at every turn boundary (maybeSubmit), ready or not. It reports
// whether a submission may go ahead now (never before the harness is ready). A change of rung relaunches the harness on the
// same session (a new generation, with why); a wait sets the phase
// waiting-provider and a timer for the earliest unblock.
func (d *Driver) followLadder(now time.Time) bool {
	p, err := outage.PlanOf(d.S, d.Cfg, now)
	if err != nil {
		// Unreadable records are never replaced by defaults: stay where we are.
		d.logf("ladder: %v (staying on the current rung)", err)
		return true
	}
	launched, err := outage.LaunchedRung(d.S)
	if err == nil && launched != p.Rung {
		d.switchRung(p, launched)
		return false
	}
	if !d.ready {
		return false // the phase stays "starting": the harness has not come up yet
	}
	d.notBefore = p.Wait
	if !p.Wait.IsZero() {
		d.waitT.set(p.Wait.Sub(now))
		d.to(machine.ProviderRefused, p.Waiting)
		return false
	}
	if d.phase == machine.Provider {
		d.to(machine.ProviderCleared, "")
	}
	return true
}

// switchRung relaunches the harness on another rung, resuming the same session.
func (d *Driver) switchRung(p outage.Plan, from string) {
	name := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	why := fmt.Sprintf("ladder: rung %s (was %s): %s", name(p.Rung), name(from), p.Why)
	d.logf("%s", why)
	d.Cfg = p.Config
	d.sess.Generation++
	d.sess.Why = why
	// This launch replaces any backed-off relaunch still pending for the old
	// rung: that timer firing later would relaunch the new harness under it.
	d.relaunchT.stop()
	d.exits.Quick = 0
	if d.outage != nil {
		d.outage.probeAt = time.Time{} // another rung, other means: probe it at once
	}
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		d.logf("ladder: tmux unobservable: %v (retrying at the next boundary)", err)
		return
	}
	var pane *tmux.Pane
	for i := range panes {
		if panes[i].Session == d.sess.TmuxName && (pane == nil || panes[i].ID == d.sess.PaneID) {
			pane = &panes[i]
		}
	}
	if err := d.launch(pane); err != nil {
		d.logf("ladder: relaunch on rung %s failed: %v", name(p.Rung), err)
		d.to(machine.LaunchFailed, "rung change failed: "+err.Error())
	}
}
