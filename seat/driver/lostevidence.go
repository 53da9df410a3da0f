package driver

import (
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
)

// closedByTranscript closes e as processed when the harness's transcript holds
// its turn (this paste: id and nonce) with a reply, and reports whether it did.
func (d *Driver) closedByTranscript(e *inbox.Entry, why string) bool {
	sess := d.lookupSession(e)
	if sess == "" {
		return false
	}
	found, where, err := d.Ad.FindTurn(d.S, d.Cfg, sess, e.Msg.ID, e.Status.Nonce)
	if err != nil {
		d.logf("transcript lookup for %s: %v", e.Msg.ID, err)
		return false
	}
	if !found {
		return false
	}
	d.logf("message %s: %s, but its turn is in the harness transcript: processed", e.Msg.ID, why)
	d.finish(e, inbox.StateProcessed, "", "turn found in the harness transcript ("+why+")", "transcript:"+where)
	return true
}

// checkLostTurnEnd runs on the heartbeat tick: a submitted message whose turn no
// longer runs in the pane, and whose Stop never came, is looked up in the
// transcript instead of waiting for its ceiling. Not while a cancel watches
// the pane: the cancel settles the message.
func (d *Driver) checkLostTurnEnd() {
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitted || !d.ready || d.Cfg.Shape == config.ShapeTurn || d.cancel != nil ||
		d.now().Sub(fl.e.Status.SubmittedAt) < foreignSettle || !d.paneShowsNoTurn() {
		return
	}
	d.closedByTranscript(fl.e, "its turn end never arrived as an event")
}

// lookupSession is the session whose records can hold e's paste: the one bound
// to it, else the seat's; "" when e was never pasted with a nonce or no session
// is known.
func (d *Driver) lookupSession(e *inbox.Entry) string {
	if e == nil || e.Status.Nonce == "" {
		return ""
	}
	if e.Status.SessionID != "" {
		return e.Status.SessionID
	}
	return d.sess.ID
}

// promptRecorded reports whether the harness's records hold e's paste (its id
// and nonce in a user row), turn finished or not, and where; false when the
// adapter cannot tell (no Capabilities.FindPrompt) or the lookup failed.
func (d *Driver) promptRecorded(e *inbox.Entry) (bool, string) {
	findPrompt := d.Ad.Caps().FindPrompt
	sess := d.lookupSession(e)
	if findPrompt == nil || sess == "" {
		return false, ""
	}
	found, where, err := findPrompt(d.S, d.Cfg, sess, e.Msg.ID, e.Status.Nonce)
	if err != nil {
		d.logf("prompt lookup for %s: %v", e.Msg.ID, err)
		return false, ""
	}
	return found, where
}

// requeueUnlessReceived re-queues a paste that has no submission evidence and
// no finished turn. When the harness recorded its prompt all the same (the
// UserPromptSubmit event was lost, not the paste) it reached the model, so it
// is resubmitted once, marked, like a turn lost in a crash — never re-sent
// unmarked. It reports whether the prompt was recorded.
func (d *Driver) requeueUnlessReceived(e *inbox.Entry, detail string) bool {
	if ok, where := d.promptRecorded(e); ok {
		d.logf("message %s: no submission evidence, but the harness recorded its prompt (%s): its turn was lost", e.Msg.ID, where)
		d.resubmitOrFail(e, "resubmission: the harness recorded the prompt, but its evidence and turn end were lost")
		return true
	}
	d.requeue(e, detail)
	return false
}

// resubmitOrFail re-queues e as pantty's one marked resubmission, or fails it
// lost when it was resubmitted already.
func (d *Driver) resubmitOrFail(e *inbox.Entry, detail string) {
	if e.Status.Resubmits == 0 {
		e.Status.Resubmits = 1
		d.requeue(e, detail)
		return
	}
	d.finish(e, inbox.StateFailed, inbox.ReasonLost, "the resubmitted turn was lost as well", "")
}
