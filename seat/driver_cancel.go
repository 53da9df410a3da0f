package seat

import (
	"fmt"
	"github.com/pantty/pantty/internal/machine"
	"time"
)

// clearComposer sends C-u: it empties the harness's input box (the one key
// both Claude Code and the simulator read as "clear the line").
func (d *Driver) clearComposer() {
	ctx, cancel := d.ctx()
	defer cancel()
	if err := d.tm.SendKeys(ctx, d.sess.PaneID, "C-u"); err != nil {
		d.logf("clear composer: %v", err)
	}
}

// cancelTurn stops the in-flight turn with one Escape (never C-c, which quits on
// a second press, never a double Escape, which opens the rewind menu), verifies
// the pane went idle, clears the prompt the harness put back, and fails the
// message with reason. It reports whether the turn stopped.
func (d *Driver) cancelTurn(reason string) error {
	fl := d.flight
	if fl == nil {
		return fmt.Errorf("no turn in flight")
	}
	d.to(machine.CancelBegun, fl.e.Msg.ID)
	if d.Cfg.Shape == ShapeTurn {
		d.killTurn(reason)
		d.evidenceT.stop()
		d.ceilingT.stop()
		d.finish(fl.e, StateFailed, reason, "the turn process was killed; 'pantty seat retry "+fl.e.Msg.ID+"' re-queues it", "")
		return nil
	}
	ctx, cancel := d.ctx()
	screen, err := d.tm.Capture(ctx, d.sess.PaneID)
	cancel()
	busy := err == nil && d.Ad.Busy(screen)
	if err == nil && !busy && fl.e.Status.State == StateSubmitting {
		// Enter went out but the harness may not show the turn yet (Claude Code
		// fires UserPromptSubmit 80–150 ms after Enter): without this wait the
		// cancel found an idle pane, failed the message, and the turn then ran
		// to its end anyway.
		busy = d.waitPane(cancelSubmitWait, true)
		if !busy {
			if ok, where := d.promptRecorded(fl.e); ok {
				d.to(machine.CancelSawPrompt, "evidence for "+fl.e.Msg.ID)
				return fmt.Errorf("the harness already took %s (its prompt is at %s) and no turn runs now: too late to cancel; its turn end settles it", fl.e.Msg.ID, where)
			}
		}
	}
	// A submitted message has started its turn (UserPromptSubmit fires before
	// it), even if the pane does not show it yet: Escape it either way.
	if busy || err == nil && fl.e.Status.State == StateSubmitted {
		ctx, cancel := d.ctx()
		err = d.tm.SendKeys(ctx, d.sess.PaneID, "Escape")
		cancel()
		if err != nil {
			return err
		}
		if !d.waitPane(cancelVerify, false) {
			d.to(machine.CancelHeld, fl.e.Msg.ID)
			return fmt.Errorf("the turn did not stop within %s of Escape", cancelVerify)
		}
	}
	d.evidenceT.stop()
	d.ceilingT.stop()
	d.clearComposer()
	d.settleComposer()
	d.finish(fl.e, StateFailed, reason, "cancelled by pantty; 'pantty seat retry "+fl.e.Msg.ID+"' re-queues it", "")
	return nil
}

// cancelVerify bounds how long a cancel waits for the pane to go idle;
// cancelSubmitWait how long it waits for a just-entered paste's turn to show.
const (
	cancelVerify     = 10 * time.Second
	cancelSubmitWait = 3 * time.Second
)

// waitPane polls the pane until the adapter sees a running turn (busy true) or
// none (busy false), and reports whether it did within limit. No hook fires on
// an interrupt (measured on Claude Code), and none when a turn starts showing,
// so the pane is the only witness; the poll is short and bounded.
func (d *Driver) waitPane(limit time.Duration, busy bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ctx, cancel := d.ctx()
		screen, err := d.tm.Capture(ctx, d.sess.PaneID)
		cancel()
		if err == nil && d.Ad.Busy(screen) == busy {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// composerQuiet and composerSettle: after a cancel the input box must stay
// empty for composerQuiet, watched for at most composerSettle.
const (
	composerQuiet  = 300 * time.Millisecond
	composerSettle = time.Second
)

// settleComposer watches the input box after a cancel and clears it again
// whenever it holds text, until it has stayed empty for composerQuiet (at most
// composerSettle): the harness may put the interrupted prompt back after the
// first clear (seen on Claude Code 2.1.328 under load). Only for adapters that
// can read their input box (Capabilities.Composer).
func (d *Driver) settleComposer() {
	composer := d.Ad.Caps().Composer
	if composer == nil {
		return
	}
	deadline := time.Now().Add(composerSettle)
	empty := time.Now()
	for time.Now().Before(deadline) && time.Since(empty) < composerQuiet {
		time.Sleep(100 * time.Millisecond)
		ctx, cancel := d.ctx()
		screen, err := d.tm.Capture(ctx, d.sess.PaneID)
		cancel()
		if err != nil {
			return
		}
		if text, ok := composer(screen); ok && text != "" {
			d.logf("the input box holds %q after the cancel: clearing it again", text)
			d.clearComposer()
			empty = time.Now()
		}
	}
}

// inputReadyLimit bounds the look for the input box after SessionStart.
const inputReadyLimit = 5 * time.Second
