package recover

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// Verdicts.
const (
	OK      = "ok"
	Dead    = "dead"
	Unknown = "unknown" // could not observe: never acted on, never silent
)

// Causes of a dead verdict (each is a means failure: tmux, process, binary,
// resume path) and of an unknown one.
const (
	CauseDriverGone   = "driver-gone"       // intent running, no live driver
	CauseWedged       = "wedged"            // the driver lives but its heartbeat is stale
	CauseTurnStuck    = "turn-stuck"        // a turn runs past its ceiling and the driver could not stop it
	CauseHarnessDown  = "harness-down"      // the pane is dead or gone, or the tmux server is
	CauseNotReady     = "harness-not-ready" // the harness is relaunched but never comes up
	CauseNoCapability = "no-capability"     // messages wait past the ceiling while nothing runs
	CauseLaunchFails  = "harness-exits"     // the harness exits before it comes up; its driver gave up
	CauseNoModel      = "no-model-access"   // the harness runs but cannot reach or use the model (credentials, login, network)
	CauseUnreadable   = "unreadable"        // a state file cannot be read (unknown)
	CauseTmux         = "tmux-unobservable" // tmux timed out or failed unclassified (unknown)
	CauseLockHolder   = "lock-holder"       // owner.lock is held by a process owner.toml does not name (unknown)
	CauseUnwritable   = "state-unwritable"  // the state root cannot be written: the driver holds its queue (unknown)
)

// Graces: how long recover lets a live, beating driver fix its own harness
// before acting itself.
const (
	// harnessGraceIntervals: the driver checks its pane on every heartbeat tick
	// and relaunches at once; a pane still down this many intervals after recover
	// first saw it is one the driver cannot bring back.
	harnessGraceIntervals = 3
	// relaunchBurst: this many launches between two sweeps with the harness
	// never ready is a harness that dies at start (a broken binary or resume path).
	relaunchBurst = 3
	// cancelGrace is how long past its ceiling a turn may run: the driver's own
	// cancel verifies for up to 10s, and a tick or two may pass before it starts.
	cancelGrace = 10 * time.Second
)

// verdict is the classification of one observation.
type verdict struct {
	State  string
	Cause  string
	Class  machine.Class // machine.ClassMeans for every dead verdict
	Reason string
	// Since is when this cause was first seen (carried from health.toml).
	Since time.Time
	// ActAfter, when set, is the end of the grace during which the live driver
	// is expected to fix the cause itself: until then recover only reports it.
	ActAfter time.Time
	// Responsive: the driver's loop still beats (it can answer a control request).
	Responsive bool
}

func unknown(cause, format string, a ...any) verdict {
	return verdict{State: Unknown, Cause: cause, Reason: fmt.Sprintf(format, a...)}
}

func dead(cause, format string, a ...any) verdict {
	return verdict{State: Dead, Cause: cause, Class: machine.ClassMeans, Reason: fmt.Sprintf(format, a...)}
}

func ok(format string, a ...any) verdict {
	return verdict{State: OK, Reason: fmt.Sprintf(format, a...)}
}

// classify turns an observation into ok, dead (with a cause) or unknown. It
// never guesses: what it could not read makes the verdict unknown.
func classify(o *observation) verdict {
	if len(o.unreadable) > 0 {
		return unknown(CauseUnreadable, "cannot read %s", strings.Join(o.unreadable, "; "))
	}
	iv := o.interval()
	if o.ownerLive && o.unwritable != nil {
		// A driver that cannot write its heartbeat looks wedged, but killing
		// it cures nothing (its replacement could not write either) and
		// loses the records it holds in memory; it writes them itself once
		// the state root has room again (docs/reliability.md).
		return unknown(CauseUnwritable, "state not writable: %v; driver pid %d (heartbeat %s old) holds the queue until its records can be written: free space or remount the state root read-write",
			o.unwritable, o.owner.PID, shortDur(o.hbAge()))
	}
	if !o.ownerLive {
		if !o.lockFree {
			return unknown(CauseLockHolder, "owner.lock is held by a process owner.toml does not name (it records pid %d, start %d): not acting on a process that cannot be identified",
				o.owner.PID, o.owner.PIDStart)
		}
		if !o.hasOwner {
			return dead(CauseDriverGone, "no driver has ever held the seat (no owner.toml)")
		}
		if o.hasExit && o.exit.GaveUp && !o.exit.At.Before(o.owner.Started) {
			return dead(CauseLaunchFails, "the harness exited %d times in a row before it came up and driver pid %d gave up; its last words: %s",
				o.exit.InARow, o.owner.PID, o.exit.Words())
		}
		return dead(CauseDriverGone, "driver pid %d (holder %s) is not running", o.owner.PID, o.owner.Holder)
	}
	if !o.ours() {
		// A new driver writes its first heartbeat within milliseconds of taking
		// the lock; give it a few intervals before calling it wedged.
		if age := o.now.Sub(o.owner.Started); age <= staleIntervals*iv+time.Second {
			return ok("driver pid %d (holder %s) is starting (%s ago)", o.owner.PID, o.owner.Holder, shortDur(age))
		}
		v := dead(CauseWedged, "driver pid %d (holder %s) has written no heartbeat in the %s since it took the seat",
			o.owner.PID, o.owner.Holder, shortDur(o.now.Sub(o.owner.Started)))
		return v
	}
	if o.hbStale() {
		if e, past := o.stuckTurn(); e != nil {
			v := dead(CauseTurnStuck, "message %s has been in its turn %s (ceiling %s) and the work loop of pid %d is stuck (heartbeat %s old, phase %s)",
				e.Msg.ID, shortDur(past), o.cfg.TurnCeiling.Duration, o.owner.PID, shortDur(o.hbAge()), o.hb.Phase)
			return v
		}
		return dead(CauseWedged, "heartbeat %s old (interval %s, phase %s): the work loop of pid %d is not running",
			shortDur(o.hbAge()), iv, o.hb.Phase, o.owner.PID)
	}
	// The loop beats. Now the harness.
	if !o.hasSess {
		if o.phaseStarting() {
			return ok("driver pid %d is starting the harness (phase %s)", o.owner.PID, o.hb.Phase)
		}
		return dead(CauseHarnessDown, "driver pid %d beats (phase %s) but no session.toml records a harness", o.owner.PID, o.hb.Phase)
	}
	if o.tmuxErr != nil && !errors.Is(o.tmuxErr, tmux.ErrNoServer) {
		return unknown(CauseTmux, "tmux server %s could not be observed: %v", o.socket, o.tmuxErr)
	}
	// A driver relaunching a harness that dies at start shows a dead or
	// respawning pane on most looks; the launch count tells it apart from a
	// harness that died once and is being brought back.
	burst := o.hasPrev && o.prev.Session == o.sess.ID && o.sess.Launches-o.prev.Launches >= relaunchBurst
	down := o.harnessDown()
	sinceLaunch := o.now.Sub(o.sess.LaunchedAt)
	// One look at a dead or respawning pane just after a launch is also what
	// a seat being restarted looks like (seat stop, then seat start: the soak
	// once caught the new driver mid-respawn, called the harness not ready
	// and released a driver that was fine, 2026-12-04). Dying at start needs
	// the previous sweep to have seen the same session down as well.
	prevDown := o.hasPrev && o.prev.Session == o.sess.ID && (o.prev.Cause == CauseNotReady || o.prev.Cause == CauseHarnessDown)
	diesAtStart := down != "" && prevDown && sinceLaunch < o.cfg.ReadyTimeout.Duration+staleIntervals*iv
	if o.phaseStarting() && (burst || diesAtStart) {
		v := dead(CauseNotReady, "the harness does not come up: %s %s after its last launch, never ready (phase %s%s); %d launches since the last sweep, %d in all",
			down, shortDur(sinceLaunch), o.hb.Phase, suffix(o.hb.Waiting), o.sess.Launches-o.prev.Launches, o.sess.Launches)
		if down == "" {
			v.Reason = fmt.Sprintf("the harness does not come up: %d launches since the last sweep (%d in all), phase %s%s, %s",
				o.sess.Launches-o.prev.Launches, o.sess.Launches, o.hb.Phase, suffix(o.hb.Waiting), o.paneText())
		}
		v.Reason += o.exitWords()
		v.Responsive = true
		return v
	}
	if down != "" {
		v := dead(CauseHarnessDown, "%s%s", down, o.exitWords())
		v.Since = o.now
		if o.hasPrev && o.prev.Cause == CauseHarnessDown && !o.prev.Since.IsZero() {
			v.Since = o.prev.Since
		}
		if act := v.Since.Add(harnessGraceIntervals * iv); o.now.Before(act) && !strings.HasPrefix(o.hb.Waiting, "relaunch failed") {
			v.ActAfter = act
			v.Reason += fmt.Sprintf("; the live driver (pid %d, phase %s) relaunches it itself", o.owner.PID, o.hb.Phase)
		}
		v.Responsive = true
		return v
	}
	if o.phaseStarting() {
		since := o.now.Sub(o.sess.LaunchedAt)
		if since > o.cfg.ReadyTimeout.Duration+staleIntervals*iv {
			v := dead(CauseNotReady, "the harness does not come up: phase %s%s, last launch %s ago (ready_timeout %s), %d launches in all",
				o.hb.Phase, suffix(o.hb.Waiting), shortDur(since), o.cfg.ReadyTimeout.Duration, o.sess.Launches)
			v.Responsive = true
			return v
		}
		return ok("harness starting (phase %s, launched %s ago)", o.hb.Phase, shortDur(since))
	}
	if o.hb.Phase == state.PhaseHeld {
		// The heartbeat could be written but another record could not (a
		// directory of its own full, a quota): the driver holds its queue.
		return unknown(CauseUnwritable, "driver pid %d holds the queue: %s", o.owner.PID, o.hb.Waiting)
	}
	if o.hb.Fault == machine.ClassMeans {
		// The driver's own classification of the harness's error: a restart
		// cannot fix a key or a network, so the live driver keeps re-probing
		// and recover only counts it (the ladder may descend).
		v := dead(CauseNoModel, "%s (since %s; the live driver pid %d holds the queue and re-probes)",
			o.hb.FaultCause, o.hb.FaultSince.UTC().Format(time.RFC3339), o.owner.PID)
		v.Responsive = true
		return v
	}
	if e, past := o.stuckTurn(); e != nil && past > o.cfg.TurnCeiling.Duration+cancelGrace+staleIntervals*iv {
		v := dead(CauseTurnStuck, "message %s has been in its turn %s, past its ceiling %s, and the driver did not stop it",
			e.Msg.ID, shortDur(past), o.cfg.TurnCeiling.Duration)
		v.Responsive = true
		return v
	}
	if ids := o.undeliveredStreak(); len(ids) >= undeliveredStreak {
		v := dead(CauseNoCapability, "the last %d messages (%s) failed undelivered, none processed since: the harness takes no input, whatever the heartbeat says",
			len(ids), strings.Join(ids, ", "))
		v.Responsive = true
		return v
	}
	if q := o.oldestQueued(); q != nil && o.hb.Phase != state.PhaseProvider && o.hb.Phase != state.PhaseRetry && o.hb.Phase != phaseRelay {
		since := latest(q.Msg.EnqueuedAt, q.Status.UpdatedAt, o.lastProgress(), o.owner.Started, o.rec.LastAt)
		if waited := o.now.Sub(since); waited > o.cfg.TurnCeiling.Duration {
			v := dead(CauseNoCapability, "message %s has waited %s (ceiling %s) with nothing running (phase %s%s): no capability, whatever the heartbeat says",
				q.Msg.ID, shortDur(waited), o.cfg.TurnCeiling.Duration, o.hb.Phase, suffix(o.hb.Waiting))
			v.Responsive = true
			return v
		}
	}
	v := ok("phase %s%s, heartbeat %s old (interval %s), %s", o.hb.Phase, suffix(o.hb.Waiting), shortDur(o.hbAge()), iv, o.paneText())
	if o.hb.Fault != "" && !strings.Contains(o.hb.Waiting, o.hb.FaultCause) {
		// A transient outage the driver holds its queue for: between probes the
		// phase names it; while the held message is tried again only the
		// heartbeat's fault does.
		v.Reason += fmt.Sprintf("; %s outage since %s: %s", o.hb.Fault, o.hb.FaultSince.UTC().Format(time.RFC3339), o.hb.FaultCause)
	}
	if o.pendingEvents > 0 && o.oldestEvent > staleIntervals*iv {
		// The loop drains events on every wake-up; old ones left are worth a look.
		v.Reason += fmt.Sprintf("; %d hook event(s) not consumed, the oldest %s old", o.pendingEvents, shortDur(o.oldestEvent))
	}
	return v
}

// exitWords is "; the harness's last words: …" when the live driver recorded
// an exit of its harness (harness-exit.toml newer than the driver), else "".
func (o *observation) exitWords() string {
	if !o.hasExit || o.exit.At.Before(o.owner.Started) {
		return ""
	}
	return fmt.Sprintf("; at its last exit (%s, %s ago) the harness said: %s", o.exit.Why, shortDur(o.now.Sub(o.exit.At)), o.exit.Words())
}

// phaseRelay is the phase of a seat a person drives by hand (relay mode): its
// queue waits by design.
const phaseRelay = "relay"

// undeliveredStreak: this many messages in a row closed as undelivered (pasted,
// Enter retried, and no UserPromptSubmit ever came) is a harness that does not
// take input — a frozen process shows a live pane and its driver beats on.
const undeliveredStreak = 2

// undeliveredStreak returns the ids of the messages that failed undelivered
// after the last processed one (recovery since resets it), newest last.
func (o *observation) undeliveredStreak() []string {
	var ids []string
	// Newest first: the streak is what follows the last message that was not
	// an undelivered failure, so the walk stops there, or at a status written
	// before the last recovery (it cannot have ended after it).
	for i := len(o.inbox.Final) - 1; i >= 0; i-- {
		r := o.inbox.Final[i]
		if r.State != inbox.StateFailed || r.At.Before(o.rec.LastAt) {
			break
		}
		e, ok := o.s.ReadFinal(o.inbox, r)
		if !ok || e.Status.EndedAt.Before(o.rec.LastAt) || e.Status.Reason != inbox.ReasonUndelivered {
			break
		}
		ids = append([]string{e.Msg.ID}, ids...)
	}
	return ids
}

// harnessDown says what is wrong with the seat's pane, or "".
func (o *observation) harnessDown() string {
	if o.cfg.Shape == config.ShapeTurn {
		// A turn seat has no resident harness: one process per message, the
		// driver's child, with no pane between turns. The driver's heartbeat
		// and the turn ceiling are its liveness (a healthy idle turn seat was
		// called dead here, and every sweep replaced its driver).
		return ""
	}
	if state.RunsOn(o.cfg, o.sess) == config.TransportAppServer {
		// No pane either: the harness is the seat's app server, the
		// driver's child, whose exit the driver sees (Server.Done) and
		// relaunches on; the heartbeat is its liveness here.
		return ""
	}
	switch {
	case errors.Is(o.tmuxErr, tmux.ErrNoServer):
		return fmt.Sprintf("the tmux server %s is gone", o.socket)
	case o.pane == nil:
		return fmt.Sprintf("pane %s of tmux session %s is gone", o.sess.PaneID, o.sess.TmuxName)
	case o.pane.Dead:
		return fmt.Sprintf("the harness in pane %s is dead (status %d, signal %d)", o.pane.ID, o.pane.DeadStatus, o.pane.DeadSignal)
	case o.pane.PID != o.sess.PanePID:
		return fmt.Sprintf("pane %s runs pid %d, not the harness session.toml records (pid %d)", o.pane.ID, o.pane.PID, o.sess.PanePID)
	}
	return ""
}

// stuckTurn returns the in-flight message and how long its turn has run, when
// it has run past its ceiling.
func (o *observation) stuckTurn() (*inbox.Entry, time.Duration) {
	e := o.inFlight()
	if e == nil {
		return nil, 0
	}
	start := e.Status.SubmittedAt
	if e.Status.State == inbox.StateSubmitting || start.IsZero() {
		start = e.Status.UpdatedAt
	}
	if past := o.now.Sub(start); past > o.cfg.TurnCeiling.Duration {
		return e, past
	}
	return nil, 0
}

func latest(ts ...time.Time) time.Time {
	var t time.Time
	for _, x := range ts {
		if x.After(t) {
			t = x
		}
	}
	return t
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
