package seat

import "time"

// A hook event can be lost while the turn it reports runs all the same: the
// `pantty hook` process killed mid-write, a hook that timed out. Then pantty's
// records say "no evidence" where the harness's own transcript says the model
// processed the message. Pasting it again would make the model process it
// twice, failing it would call a processed message failed, and waiting for a
// Stop that never comes holds the seat's queue until the ceiling. So before
// any of those, the transcript decides (found by the soak: scripts/soak,
// docs/reliability.md).

// closedByTranscript closes e as processed when the harness's transcript holds
// its turn (this paste: id and nonce) with a reply, and reports whether it did.
func (d *Driver) closedByTranscript(e *Entry, why string) bool {
	if e == nil || e.Status.Nonce == "" {
		return false
	}
	sess := e.Status.SessionID
	if sess == "" {
		sess = d.sess.ID
	}
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
	d.evidenceT.stop()
	d.ceilingT.stop()
	d.finish(e, StateProcessed, "", "turn found in the harness transcript ("+why+")", "transcript:"+where)
	return true
}

// checkLostTurnEnd runs on the heartbeat tick: a submitted message whose turn no
// longer runs in the pane, and whose Stop never came, is looked up in the
// transcript instead of waiting for its ceiling.
func (d *Driver) checkLostTurnEnd() {
	fl := d.flight
	if fl == nil || fl.e.Status.State != StateSubmitted || !d.ready || d.Cfg.Shape == ShapeTurn ||
		time.Since(fl.e.Status.SubmittedAt) < foreignSettle || !d.paneShowsNoTurn() {
		return
	}
	d.closedByTranscript(fl.e, "its turn end never arrived as an event")
}
