package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// clearComposer sends C-u: it empties the harness's input box (the one key
// both Claude Code and the simulator read as "clear the line").
func (d *Driver) clearComposer() {
	if d.onAppServer() {
		return // no composer: turn/start takes the text as data
	}
	ctx, cancel := d.ctx()
	defer cancel()
	if err := d.pane().Clear(ctx); err != nil {
		d.logf("clear composer: %v", err)
	}
}

// cancelRun is a cancel under way: it stops the turn in flight with one
// Escape and learns from the pane whether it stopped. Its looks at the pane
// are pane watches (inputbox.go), so the loop runs meanwhile; done
// hears the outcome once (the control request's answer, or the ceiling's log).
type cancelRun struct {
	fl      *delivery
	reason  string
	done    func(error)
	escaped bool            // the Escape went to the pane: a turn end now is the interrupted turn's (cancelEscaped)
	lateEnd *hookwire.Event // that turn end, kept: if the cancel does not hold, it is the turn's own after all
}

// cancelVerify bounds how long a cancel watches for the pane to go idle;
// cancelSubmitWait how long it watches for a just-entered paste's turn to show;
// cancelIdleHold how long the pane must look idle, look after look, to count:
// under load Claude Code 2.1.328 drew one idle-looking frame about 100 ms after
// the Escape and showed the turn running again until 475 ms (measured
// 2026-12-04 with six CPU-burning loops beside it).
const (
	cancelVerify     = 10 * time.Second
	cancelSubmitWait = 3 * time.Second
	cancelLook       = 100 * time.Millisecond
	cancelIdleHold   = 2 * cancelLook
)

// cancelTurn stops the in-flight turn with one Escape (never C-c, which quits on
// a second press, never a double Escape, which opens the rewind menu), verifies
// the pane went idle, clears the prompt the harness put back, and fails the
// message with reason; done hears whether the turn stopped. The evidence and
// ceiling timers are stopped while the cancel runs (no Enter is retried into a
// turn being cancelled) and armed again when it does not hold.
func (d *Driver) cancelTurn(reason string, done func(error)) {
	fl := d.flight
	switch {
	case fl == nil:
		done(fmt.Errorf("no turn in flight"))
		return
	case d.cancel != nil:
		done(fmt.Errorf("a cancel of %s is already under way", d.cancel.fl.e.Msg.ID))
		return
	}
	d.to(machine.CancelBegun, fl.e.Msg.ID)
	if d.Cfg.Shape == config.ShapeTurn {
		d.killTurn(reason)
		d.finish(fl.e, inbox.StateFailed, reason, "the turn process was killed; 'pantty seat retry "+d.S.Name+" "+fl.e.Msg.ID+"' re-queues it", "")
		done(nil)
		return
	}
	c := &cancelRun{fl: fl, reason: reason, done: done}
	d.cancel = c
	d.way().cancel(c)
}

// cancel is the pane's cancel: one Escape when the pane shows the turn
// running (or the submission has its evidence), verified by the pane going
// idle, then the input box cleared.
func (w paneWay) cancel(c *cancelRun) {
	d, fl := w.d, c.fl
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	switch busy := err == nil && d.Ad.Busy(screen); {
	case err == nil && !busy && fl.e.Status.State == inbox.StateSubmitting:
		// Enter went out but the harness may not show the turn yet (Claude Code
		// fires UserPromptSubmit 80–150 ms after Enter): without this look the
		// cancel found an idle pane, failed the message, and the turn then ran
		// to its end anyway.
		d.watchPane(flight.Wait{Every: cancelLook, Limit: cancelSubmitWait, Cond: d.Ad.Busy},
			func(busy bool) { d.cancelShown(c, busy) })
	default:
		// A submitted message has started its turn (UserPromptSubmit fires
		// before it), even if the pane does not show it yet: Escape it either way.
		d.cancelEscape(c, busy || err == nil && fl.e.Status.State == inbox.StateSubmitted)
	}
}

// cancelShown continues a cancel of a just-entered paste once the pane was
// watched for its turn: a prompt the harness already recorded with no turn
// running is too late to cancel (its turn end settles it).
func (d *Driver) cancelShown(c *cancelRun, busy bool) {
	if !d.cancelCurrent(c) {
		return
	}
	e := c.fl.e
	if !busy && e.Status.State == inbox.StateSubmitting {
		if ok, where := d.promptRecorded(e); ok {
			d.to(machine.CancelSawPrompt, "evidence for "+e.Msg.ID)
			d.cancelEnd(c, fmt.Errorf("the harness already took %s (its prompt is at %s) and no turn runs now: too late to cancel; its turn end settles it", e.Msg.ID, where))
			return
		}
	}
	d.cancelEscape(c, busy || e.Status.State == inbox.StateSubmitted)
}

// cancelEscape sends the Escape (when a turn runs) and watches the pane go
// idle; then the input box is cleared and the message fails.
func (d *Driver) cancelEscape(c *cancelRun, escape bool) {
	if !escape {
		d.cancelClear(c)
		return
	}
	c.escaped = true
	ctx, cancel := d.ctx()
	err := d.pane().Interrupt(ctx)
	cancel()
	if err != nil {
		d.cancelEnd(c, err)
		return
	}
	d.watchPane(flight.Wait{Every: cancelLook, Limit: cancelVerify, Hold: cancelIdleHold, Cond: func(s string) bool { return !d.Ad.Busy(s) }},
		func(idle bool) {
			if !d.cancelCurrent(c) {
				return
			}
			if !idle {
				d.to(machine.CancelHeld, c.fl.e.Msg.ID)
				d.cancelEnd(c, fmt.Errorf("the turn did not stop within %s of Escape", cancelVerify))
				return
			}
			d.cancelClear(c)
		})
}

// composerQuiet and composerSettle: after a cancel the input box must stay
// empty for composerQuiet, watched for at most composerSettle. Claude Code
// 2.1.328 puts an interrupted prompt back ("[Pasted text #3 +3 lines]") in the
// frame that shows it idle on a quiet machine, and up to 174 ms after that
// frame with six CPU-burning loops beside it (measured 2026-12-04); a CI run
// under the full suite's load once had the put-back arrive after a 300 ms
// quiet time, and the next message was pasted behind it. One second is
// three times the worst lag seen. A put-back that arrives before the next
// delivery is cleared by its C-u; one later than that joins the next message
// (not seen with these bounds).
const (
	composerQuiet  = time.Second
	composerSettle = 3 * time.Second
)

// cancelClear empties the input box and watches it: the harness may put the
// interrupted prompt back after the first clear (see composerQuiet), so it is
// cleared again whenever it holds text, until it has stayed empty for
// composerQuiet (at most composerSettle). Only adapters that can read their
// input box (Capabilities.Composer) are watched. Then the message fails with
// the cancel's reason.
func (d *Driver) cancelClear(c *cancelRun) {
	d.clearComposer()
	d.cancelSettle(c, d.now().Add(composerSettle))
}

func (d *Driver) cancelSettle(c *cancelRun, deadline time.Time) {
	composer := d.Ad.Caps().Composer
	left := deadline.Sub(d.now())
	if composer == nil || left <= 0 {
		d.cancelFinish(c)
		return
	}
	holdsText := func(s string) bool { text, ok := composer(s); return ok && text != "" }
	quiet := composerQuiet
	if d.Ad.Caps().KeepsNoInterrupted {
		quiet = cancelLook // one look: nothing comes back into the box
	}
	d.watchPane(flight.Wait{Quiet: cancelLook, Every: cancelLook, Limit: min(quiet, left), Cond: holdsText},
		func(text bool) {
			if !d.cancelCurrent(c) {
				return
			}
			if !text {
				d.cancelFinish(c)
				return
			}
			d.logf("the input box holds text after the cancel: clearing it again")
			d.clearComposer()
			d.cancelSettle(c, deadline)
		})
}

// cancelEscaped reports whether a cancel of fl has sent its Escape: a turn
// end for fl then belongs to the cancel under way. After its Escape the
// harness may still report the interrupted turn (Gemini CLI's AfterAgent with
// the partial reply, measured), and the cancel, not that report, settles the
// message; the event is kept (cancelRun.lateEnd), and if the cancel does not
// hold (the turn ran on and ended by itself) it is the turn's own after all
// (cancelEnd). A turn end before the Escape is the turn's own: the message is
// processed and the cancel answered too late.
func (d *Driver) cancelEscaped(fl *delivery) bool {
	return fl != nil && d.cancel != nil && d.cancel.fl == fl && d.cancel.escaped
}

// cancelCurrent reports whether c is still the cancel under way and its
// message still the one in flight; a message that ended meanwhile (its turn
// end came first) answers the cancel and leaves the pane alone.
func (d *Driver) cancelCurrent(c *cancelRun) bool {
	if d.cancel != c {
		return false
	}
	if d.flight != c.fl {
		d.cancel = nil
		c.done(fmt.Errorf("%s ended (%s) before the cancel took effect", c.fl.e.Msg.ID, c.fl.e.Status.State))
		return false
	}
	return true
}

// cancelFinish fails the cancelled message and answers the cancel.
func (d *Driver) cancelFinish(c *cancelRun) {
	d.cancel = nil
	d.finish(c.fl.e, inbox.StateFailed, c.reason, "cancelled by pantty; 'pantty seat retry "+d.S.Name+" "+c.fl.e.Msg.ID+"' re-queues it", "")
	c.done(nil)
}

// cancelEnd answers a cancel that did not hold: the turn goes on, under its
// ceiling again (and its evidence timer, if it has no evidence yet).
func (d *Driver) cancelEnd(c *cancelRun, err error) {
	d.cancel = nil
	if d.flight == c.fl {
		switch {
		case c.fl.e.Status.State == inbox.StateSubmitting:
			c.fl.lookFrom = d.now()
		case c.reason == inbox.ReasonCeiling:
			// A cancel at the ceiling that did not hold is not tried again
			// at once (as before the cancel was a pane watch): the turn runs
			// on, its message in flight, until its turn end or a person.
			c.fl.ceilingSpent = true
		}
	}
	c.done(err)
	if c.lateEnd != nil && d.flight == c.fl {
		// The turn did not stop for the Escape but ended on its own while
		// the pane was watched: its turn end settles the message.
		d.onTurnEnd(*c.lateEnd)
	}
}

// abandonCancel answers a cancel whose pane is gone (the harness exited, the
// driver stops) before its look could: the cancel could not be verified.
func (d *Driver) abandonCancel(why string) {
	if c := d.cancel; c != nil {
		d.cancel = nil
		c.done(fmt.Errorf("%w: %s before the cancel of %s was verified", state.ErrUnobservable, why, c.fl.e.Msg.ID))
	}
}

// withdraw answers `pantty seat drop`: the named messages, or every queued
// board message, become failed with reason dropped — in memory, which is the
// queue maybeSubmit reads, and on disk — unless they are no longer queued (in
// flight or final), which are left as they are and named. The cursor moves
// once, after all of them.
func (d *Driver) withdraw(r state.Request) {
	var w seat.Withdrawal
	var targets []*inbox.Entry
	if r.All {
		for _, e := range d.order {
			if e.Status.State == inbox.StateQueued && e.Msg.From != guard.ReservedSender {
				targets = append(targets, e)
			}
		}
	}
	for _, id := range r.MsgIDs {
		d.addMessage(id) // linked since the last scan: take it in first
		e, ok := d.entries[id]
		if !ok {
			w.Left = append(w.Left, fmt.Sprintf("%s (not in the inbox)", id))
			continue
		}
		targets = append(targets, e)
	}
	now := d.now()
	for _, e := range targets {
		st := e.Status
		if err := seat.WithdrawStatus(d.S, e.Msg, &st, now); err != nil {
			w.Left = append(w.Left, fmt.Sprintf("%s (%v)", e.Msg.ID, err))
			continue
		}
		if err := d.S.WriteStatus(st); err != nil {
			// Not recorded: it stays queued, in memory as on disk.
			d.logf("withdraw %s: %v", e.Msg.ID, err)
			w.Left = append(w.Left, fmt.Sprintf("%s (not recorded: %v)", e.Msg.ID, err))
			continue
		}
		e.Status = st
		w.Add(e.Msg.ID)
	}
	if w.Count > 0 {
		d.logf("withdrew %d queued message(s)", w.Count)
		d.updateCursor()
	}
	res := state.Result{ID: r.ID, OK: true, Detail: w.Summary(), Dropped: w.Count, Left: w.Left, At: d.now().UTC()}
	if err := d.S.ResultFile(r.ID).Write(res); err != nil {
		d.logf("control answer %s: %v", r.ID, err)
	}
}

// writeSettings resolves what this launch lets the model reach, records it in
// authority.toml (status and gates read it), writes the per-launch harness
// settings that carry it, and watches the drop directory when isolation is on.
func (d *Driver) writeSettings() (state.Authority, error) {
	env, err := launch.HarnessEnv(os.Environ(), d.S, d.Cfg, d.Ad.Env(d.S, d.Cfg))
	if err != nil {
		return state.Authority{}, err
	}
	a, err := harness.ResolveAuthority(d.Ad, d.S, d.Cfg, env, d.now())
	if err != nil {
		return a, err
	}
	if err := d.S.AuthorityFile().Write(a); err != nil {
		return a, err
	}
	d.logf("authority: isolation %s (%s)", a.Isolation, a.Why)
	settings, err := hookwire.ClaudeSettings(d.Pantty, d.S, d.Cfg.Activity, a)
	if err != nil {
		return a, err
	}
	if err := d.S.WriteRaw(d.S.SettingsPath(), settings); err != nil {
		return a, err
	}
	if a.Drop != "" && a.Drop != d.drop && d.w != nil {
		if err := d.w.Add(a.Drop); err != nil {
			return a, err
		}
		d.drop = a.Drop
		d.drainDrop() // requests left from before this driver ran
	}
	return a, nil
}

// drainDrop takes every whole request in the drop directory: it is read without
// following links and within its bound, checked, done for this seat, answered
// beside it (<id>.done) and removed. Nothing in it can name another seat.
func (d *Driver) drainDrop() {
	names, err := state.PendingDrops(d.drop)
	if err != nil {
		d.logf("drop: %v", err)
		return
	}
	for _, name := range names {
		path := filepath.Join(d.drop, name)
		r, err := state.ReadDrop(path)
		os.Remove(path)
		ans := state.DropAnswer{At: d.now().UTC()}
		if err == nil {
			ans.Detail, err = d.onDrop(r)
		}
		ans.OK = err == nil
		if err != nil {
			ans.Error = err.Error()
		}
		d.logf("drop %s: %s ok=%v %s%s", name, r.Kind, ans.OK, ans.Detail, ans.Error)
		id := name[:len(name)-len(".req")]
		if werr := state.DropAnswerFile(d.drop, id).Write(ans); werr != nil {
			d.logf("drop answer %s: %v", id, werr)
		}
	}
}

func (d *Driver) onDrop(r state.DropRequest) (string, error) {
	if r.Kind == state.DropRefresh {
		return d.requestRefresh()
	}
	path, err := d.S.Handoff().AddNote(r.Text, d.now())
	if err != nil {
		return "", err
	}
	return "noted in " + filepath.Base(path) + " (it goes into the next handoff)", nil
}
