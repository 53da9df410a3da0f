package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// loadInbox reads every stored message and its status into memory.
func (d *Driver) loadInbox() error {
	es, err := d.S.Entries()
	if err != nil {
		return fmt.Errorf("seat %q: inbox: %w", d.S.Name, err)
	}
	aside := false
	if d.entries == nil {
		d.entries = map[string]*inbox.Entry{}
	}
	for i := range es {
		if old, ok := d.entries[es[i].Msg.ID]; ok {
			// Keep our in-memory state; it is at least as new as the file.
			_ = old
			continue
		}
		e := es[i]
		d.entries[e.Msg.ID] = &e
		d.order = append(d.order, &e)
		aside = d.setAside(&e) || aside
	}
	d.sortOrder()
	if aside {
		d.updateCursor()
	}
	return nil
}

// setAside records the failed status readEntry gave a message whose files
// could not be read, so it is final for the cursor and visible as failed,
// and the queue goes on without it. It reports whether it recorded one; the
// caller moves the cursor once the queue is in order again.
func (d *Driver) setAside(e *inbox.Entry) bool {
	if e.SetAside == "" {
		return false
	}
	d.logf("inbox: message %s set aside as failed (%s): %s", e.Msg.ID, inbox.ReasonUnreadable, e.SetAside)
	if err := d.S.WriteStatus(e.Status); err != nil {
		d.logf("inbox: recording %s as failed: %v", e.Msg.ID, err)
		return false
	}
	e.SetAside = ""
	return true
}

func (d *Driver) sortOrder() {
	sort.SliceStable(d.order, func(i, j int) bool {
		a, b := d.order[i].Msg, d.order[j].Msg
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		return a.ID < b.ID
	})
}

// addMessage takes one newly linked message into the queue.
func (d *Driver) addMessage(id string) {
	if _, ok := d.entries[id]; ok || !guard.ValidID(id) {
		return
	}
	got, ok := d.S.ReadEntry(id)
	if !ok {
		return
	}
	e := &got
	d.entries[id] = e
	d.order = append(d.order, e)
	aside := d.setAside(e)
	d.sortOrder()
	if aside {
		d.updateCursor()
	}
}

// recoverFlight finds a message a previous driver left between paste and turn
// end. Its events (if any arrived while no driver ran) are in events/ and are
// consumed next; the state decides what evidence still has to come.
func (d *Driver) recoverFlight() {
	for _, e := range d.order {
		switch e.Status.State {
		case inbox.StateSubmitting, inbox.StateSubmitted:
		default:
			continue
		}
		if d.flight != nil {
			// Only one message is ever in flight; a second one is a leftover of a
			// crash between two writes: settle it as not delivered.
			d.logf("message %s also in state %s: re-queued", e.Msg.ID, e.Status.State)
			d.requeue(e, "")
			continue
		}
		d.flight = &delivery{e: e, enterTries: d.Cfg.SubmitRetries, recovered: true}
		if !d.adopted {
			// The harness process that had it is gone: settle by its records,
			// after taking in the evidence that arrived while no driver ran.
			d.drainEvents()
			d.settleLostFlight()
			continue
		}
		if e.Status.State == inbox.StateSubmitting {
			// Evidence may still be on its way (the hook runs on its own); wait
			// for it as if just sent, then inspect the pane.
			d.flight.enterTries = 0
			d.flight.lookFrom = d.now()
			d.to(machine.Inherited, "evidence for "+e.Msg.ID)
		} else {
			d.to(machine.InheritedInTurn, e.Msg.ID)
		}
	}
}

// settleLostFlight decides the in-flight message's state when the harness that
// had it is gone: a submission never evidenced is simply re-queued; an evidenced
// one is looked up in the harness's transcript first, then resubmitted once
// (marked), then failed.
func (d *Driver) settleLostFlight() {
	f := d.flight
	if f == nil {
		return
	}
	d.flight = nil
	e := f.e
	if e.Status.State == inbox.StateSubmitting {
		if d.closedByTranscript(e, "no submission evidence before the harness went") {
			return
		}
		d.requeueUnlessReceived(e, "")
		return
	}
	found, where, err := d.Ad.FindTurn(d.S, d.Cfg, e.Status.SessionID, e.Msg.ID, e.Status.Nonce)
	if err != nil {
		d.logf("transcript lookup for %s: %v", e.Msg.ID, err)
	}
	if found {
		d.finish(e, inbox.StateProcessed, "", "turn found in the harness transcript", "transcript:"+where)
		return
	}
	d.resubmitOrFail(e, "resubmission: the turn end was lost with the harness")
}

func (d *Driver) requeue(e *inbox.Entry, detail string) {
	e.Status.State = inbox.StateQueued
	e.Status.Detail = detail
	e.Status.PromptID = ""
	d.writeStatus(e)
}

// finish puts a message in a final state and moves the cursor.
func (d *Driver) finish(e *inbox.Entry, state, reason, detail, turnEnd string) {
	if d.flight != nil && d.flight.e == e {
		d.flight = nil
	}
	e.Status.State = state
	e.Status.Reason = reason
	e.Status.Detail = detail
	e.Status.TurnEnd = turnEnd
	e.Status.EndedAt = d.now().UTC()
	d.writeStatus(e)
	d.logf("message %s %s %s", e.Msg.ID, state, reason)
	if state == inbox.StateProcessed {
		d.outageOver()
		d.stepDone = true
		d.sinceRefresh++
		d.ctxr.LastTurnEnd = e.Status.EndedAt
		d.writeContext()
	}
	if r, ok := d.probes[e.Msg.ID]; ok {
		delete(d.probes, e.Msg.ID)
		d.answerProbe(r, e)
	}
	d.updateCursor()
	d.to(machine.Settled, "")
}

// updateCursor writes how far every message is final. It moves only over
// durable records: while a status is pending (unwritten), the cursor stays
// where the files put it, and flushState moves it once they are written.
func (d *Driver) updateCursor() {
	if len(d.unwritten.statuses) > 0 {
		return
	}
	es := make([]inbox.Entry, len(d.order))
	for i, e := range d.order {
		es[i] = *e
	}
	c, ok := inbox.CursorOf(es)
	if !ok {
		return
	}
	c.Updated = d.now().UTC()
	if err := d.S.CursorFile().Write(c); err != nil {
		d.stateFailed("cursor", err)
	}
}

// maybeSubmit delivers the next queued message when the seat is at a turn
// boundary: harness ready, nothing in flight, no person's turn running, no
// provider wait. What may move and what goes next are machine's pure
// decisions (Boundary.Hold, Next); the steps between them have effects of
// their own (relay, ladder, outage hold) and stay here.
func (d *Driver) maybeSubmit() {
	b := machine.Boundary{Phase: d.phase, InFlight: d.flight != nil, PersonsTurn: d.foreignTurn != "",
		Blocked: d.blocked != "", Cycle: d.cycle != nil, CommandRunning: d.cmdRun != nil,
		StateUnwritable: d.unwritten.faulty()}
	if hold := b.Hold(); hold != "" {
		if b.StateUnwritable && d.phase != machine.Held {
			if _, ok := machine.Lookup(d.phase, machine.StateUnwritable); ok {
				d.to(machine.StateUnwritable, d.unwritten.cause())
			}
		}
		return
	}
	if d.relayHolds() {
		return // a person owns the input: board messages wait in the queue
	}
	now := d.now()
	// The running rung (demotion floor and provider blocks) is derived here, at
	// every boundary, even before the harness is ready: a rung whose harness
	// cannot start is left as soon as recover lowers the floor.
	if !d.followLadder(now) {
		return
	}
	if now.Before(d.notBefore) || d.holdForOutage(now) {
		return
	}
	var queue []machine.Queued
	for _, e := range d.order {
		if e.Status.State == inbox.StateQueued {
			queue = append(queue, machine.Queued{ID: e.Msg.ID, NotBefore: e.Status.NotBefore,
				OutageHeld: e.Status.Reason == outage.ReasonProviderRefusal || e.Status.Reason == hookwire.ReasonMeansFault || e.Status.Reason == hookwire.ReasonTransient})
		}
	}
	p := machine.Next(now, len(d.cmds) > 0, queue, d.Cfg.Shape == config.ShapeStep && d.stepDone)
	switch p.Choice {
	case machine.RunCommand:
		d.runCommand()
	case machine.WaitUntil:
		d.waitT.set(p.Wait)
	case machine.Recycle:
		d.recycleStep(d.entries[p.ID])
	case machine.Deliver:
		if d.onAppServer() && !d.threadIdle() {
			return // the server's start or the running turn's turn/completed wakes the loop
		}
		if e := d.entries[p.ID]; !d.boxHolds() && !d.refreshBefore(e) {
			d.deliver(e)
		}
	case machine.Nothing:
		if d.held != "" && d.boxHolds() {
			return // the dialog or draft is still there: the seat says so
		}
		if d.phase != machine.Idle {
			d.to(machine.Drained, "")
		}
	}
}

// deliver pastes one guarded message: clear the composer, paste with bracketed
// paste from a uniquely named buffer, let the paste settle, send Enter as its own
// key, then wait for UserPromptSubmit evidence.
func (d *Driver) deliver(e *inbox.Entry) {
	if !d.onAppServer() && d.Cfg.Shape != config.ShapeTurn && d.paneBusy() {
		// A turn is running that pantty did not start (a person's prompt whose
		// UserPromptSubmit is not consumed yet): pasting now would land in a
		// busy harness. Look again shortly; the events will tell.
		d.waitT.set(busyRecheck)
		return
	}
	m := e.Msg.Message()
	m.Resubmit = e.Status.Resubmits
	sub, err := guard.Guard(m, d.facts)
	if errors.Is(err, guard.ErrUnsupportedFacts) {
		// The seat's dispatch facts are wrong, not the message: submit nothing
		// until a person fixes them, and say so in the heartbeat.
		d.blocked = err.Error()
		d.logf("guard refuses this seat's dispatch facts: %v", err)
		d.to(machine.Blocked, "blocked: "+d.blocked)
		return
	}
	if err != nil {
		d.finish(e, inbox.StateFailed, inbox.ReasonUnsafe, err.Error(), "")
		return
	}
	// Write-ahead: the artifact (what is about to be sent) and the status
	// saying it is being submitted, with its nonce and attempt, are durable
	// before any key goes to the pane. Otherwise a driver started after a
	// crash finds "queued" on disk and delivers it a second time.
	submitting := func(st *inbox.Status) {
		st.State = inbox.StateSubmitting
		st.Attempts++
		st.Nonce = sub.Nonce()
		st.NotBefore = time.Time{}
	}
	ahead, err := flight.WriteAhead(sub.Text(), func() error {
		if !d.writeArtifact(e, e.Status.Attempts+1, sub) || !d.commitStatus(e, submitting) {
			return errors.New(d.unwritten.cause())
		}
		return nil
	})
	if err != nil {
		d.logf("deliver %s: not pasted: %s", e.Msg.ID, d.unwritten.cause())
		d.to(machine.StateUnwritable, d.unwritten.cause())
		return
	}
	// The evidence window starts now, and again once Enter went: a paste
	// that failed with the harness still there is looked at after
	// submit_timeout like a silent one (before, nothing looked again).
	d.flight = &delivery{e: e, sub: sub, lookFrom: d.now()}
	d.to(machine.Pasted, e.Msg.ID)
	if d.Cfg.Shape == config.ShapeTurn {
		d.deliverTurn(e, sub)
		return
	}
	d.way().submit(d.flight, sub, ahead)
}

// submit is the pane's submission: the paste through the board door
// (Submit), Enter once it settled, the evidence window from the Enter.
func (w paneWay) submit(fl *delivery, sub guard.Submission, ahead flight.Ahead) {
	d := w.d
	fl.entering = true
	// Enter is still wanted when it is due if the message is still this
	// flight and no cancel of it is under way.
	live := func() bool { return d.flight == fl && d.cancel == nil }
	d.Submit(sub, ahead, live, func(err error) {
		fl.entering = false
		if err != nil {
			d.logf("deliver %s: %v", fl.e.Msg.ID, err)
			d.checkHarness("paste failed")
			return
		}
		fl.lookFrom = d.now()
	})
}

// Submit is the board door: the only way board text reaches the pane, and it
// takes a Submission, which only Guard can make, with a its durable record
// (flight.WriteAhead of the submission's text). entered runs on the loop
// once Enter went (nil) or with why not; live says, when Enter is due,
// whether the message is still this flight's.
func (d *Driver) Submit(s guard.Submission, a flight.Ahead, live func() bool, entered func(error)) {
	if a.Text() != s.Text() {
		entered(fmt.Errorf("%w: the record is of other text than the submission", flight.ErrUnwritten))
		return
	}
	d.paste(a, d.pasteSettle(), live, func(err error) {
		if errors.Is(err, flight.ErrNotPasted) {
			d.notPasted(s, err)
		}
		entered(err)
	})
}

// paste is the two doors' one way into the pane (Submit, Run): the flight
// fills the input box, a pane watch waits as settle says, and Enter goes
// onto the box only, on the loop; entered hears whether it went. Enter is a
// key of its own after the paste settled: one inside the harness's paste
// window becomes a newline in the prompt instead of submitting it. When
// Enter is due and live says the text is no longer wanted, or the pane did
// not settle, the box is cleared instead (and entered hears the latter).
func (d *Driver) paste(a flight.Ahead, settle flight.Wait, live func() bool, entered func(error)) {
	ctx, cancel := d.ctx()
	cleared, err := flight.Fill(ctx, d.pane(), d.box(), a)
	cancel()
	if cleared {
		d.strandedCmd = ""
	}
	if err != nil {
		entered(err)
		return
	}
	if cleared && settle.Bound {
		// The box showed pantty's leftover until the clear went: that text
		// would pass for the paste's. The whole settle, as before.
		settle = flight.Wait{Quiet: d.Cfg.PasteSettle.Duration}
	}
	d.watchPane(settle, func(ok bool) {
		switch {
		case !live():
			d.clearComposer()
		case !ok:
			d.clearComposer()
			entered(fmt.Errorf("the pane did not show %s settled in the input box within %s (a completion Enter would take instead): not entered", a.Text(), settle.Limit))
		case settle.Cond != nil && !settle.Bound:
			// The watch saw the box hold exactly the text, settled (the
			// command door's CommandSettled): that look is the box check.
			// A second reading would take Gemini CLI's completion list
			// under the command for a dialog.
			ctx, cancel := d.ctx()
			defer cancel()
			entered(d.pane().Enter(ctx))
		default:
			ctx, cancel := d.ctx()
			defer cancel()
			entered(flight.Enter(ctx, d.pane(), d.box()))
		}
	})
}

// pasteSettle is the wait between a paste and its Enter: the whole
// paste_settle, or, on a harness measured to draw a paste only once it has
// committed (harness.Capabilities.PasteQuiet), until the box shows it and
// the pane has been quiet that long, with paste_settle as the bound. An
// Enter that still lands in the paste window (a harness slower than
// measured) becomes a newline or is eaten: no evidence comes, and the Enter
// retry (onEvidenceTimeout) submits the box.
func (d *Driver) pasteSettle() flight.Wait {
	c := d.Ad.Caps()
	if c.Composer != nil && c.PasteQuiet <= 0 && c.InputReady != nil {
		// The whole settle, then until the box holds the paste with the
		// harness ready for input, bounded: Gemini CLI draws "Executing
		// Hooks" above its box while the last turn's hooks still run, and an
		// Enter then was not sent (9 of 10 messages waited for the Enter
		// retry, submit_timeout later).
		// Held one look interval: on the pane's change events the look comes
		// as the box is drawn, and Gemini CLI's key handler lags its render
		// (docs/gemini.md): an Enter at the very redraw is one the timed
		// looks, 0-50 ms after it, did not send.
		box := d.box()
		return flight.Wait{Quiet: d.Cfg.PasteSettle.Duration, Every: enterReadyEvery, Limit: enterReadyLimit, Hold: enterReadyEvery,
			Cond: func(screen string) bool { return box.Read(screen).Leftover }, Bound: true}
	}
	if c.PasteQuiet <= 0 || c.Composer == nil {
		return flight.Wait{Quiet: d.Cfg.PasteSettle.Duration}
	}
	return flight.Wait{Limit: d.Cfg.PasteSettle.Duration, Cond: d.box().Shows, Still: c.PasteQuiet, Bound: true}
}

// enterReadyLimit bounds the wait, after the settle, for a harness to be
// ready for the Enter (pasteSettle); past it Enter goes through its usual
// box check, and the Enter retry covers the rest. enterReadyEvery is how
// often it looks.
const (
	enterReadyLimit = 3 * time.Second
	enterReadyEvery = 50 * time.Millisecond
)

// onEvidenceTimeout retries Enter a bounded number of times when no
// UserPromptSubmit evidence came; it never re-pastes once evidence could exist.
// The loop runs it through timedOut, so no Enter goes to a harness whose
// turn's records are already written.
func (d *Driver) onEvidenceTimeout() {
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitting {
		return
	}
	if d.unwritten.faulty() {
		// The hook that records the evidence writes into the same state
		// root: its silence says nothing while writes fail. Look again
		// later; once the records are written the usual judgement runs
		// (the harness's own record first, then Enter).
		fl.lookFrom = d.now()
		return
	}
	if d.onAppServer() {
		// turn/start's answer settles the submission (onTurnStarted), and
		// the call is bounded: nothing to look at or retry meanwhile.
		fl.lookFrom = d.now()
		return
	}
	// This look starts the next window: whatever is decided below that
	// leaves the message waiting (a busy pane, a failed capture) looks again
	// after submit_timeout, as an Enter retry does from its Enter.
	fl.lookFrom = d.now()
	if fl.notPasted != "" {
		// fillBox found the box taken between the boundary's look and the
		// paste: nothing reached the pane, so the message simply waits again.
		d.flight = nil
		d.requeue(fl.e, "not pasted ("+fl.notPasted+"): queued again")
		d.to(machine.Requeued, "")
		return
	}
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	if err != nil {
		d.checkHarness("capture failed")
		return
	}
	busy := d.Ad.Busy(screen)
	if why := d.box().EnterBlocked(screen); why != "" && !busy {
		// No key onto a screen without the input box: an Enter retry (or the
		// C-u of a give-up) would answer the dialog. The try is not counted;
		// this look starts the next window, and a person answers the dialog.
		// The harness's records may still show the turn ran (the dialog came
		// after it): that closes the message now.
		if d.closedByTranscript(fl.e, "no submission evidence") {
			return
		}
		if d.waiting != why {
			d.logf("no submission evidence for %s and no input box on the pane: no Enter (%s)", fl.e.Msg.ID, why)
			d.waiting = why
			d.beat()
		}
		return
	}
	if strings.HasPrefix(d.waiting, dialogHold) {
		d.waiting = fl.e.Msg.ID // the box is back
		d.beat()
	}
	closed := !busy && d.closedByTranscript(fl.e, "no submission evidence")
	switch machine.AfterSilence(machine.Silence{Busy: busy, Closed: closed, Tries: fl.enterTries,
		MaxTries: d.Cfg.SubmitRetries, Recovered: fl.recovered}) {
	case machine.WaitLonger: // a turn runs: its evidence is late (lookFrom moved above)
	case machine.ClosedByRecord:
	case machine.RetryEnter:
		fl.enterTries++
		d.logf("no submission evidence for %s: Enter retry %d of %d", fl.e.Msg.ID, fl.enterTries, d.Cfg.SubmitRetries)
		ctx, cancel := d.ctx()
		err := d.pane().Enter(ctx)
		cancel()
		if err != nil {
			d.checkHarness("send Enter failed")
			return
		}
		fl.lookFrom = d.now()
	case machine.Requeue:
		// Inherited from a driver killed mid-delivery, possibly before it pasted:
		// with no evidence after the Enter retries, the text never reached the
		// model, so it is queued again rather than failed.
		d.clearComposer()
		d.flight = nil
		d.requeueUnlessReceived(fl.e, "no submission evidence after a driver restart: queued again")
		d.to(machine.Requeued, "")
	case machine.Undelivered:
		d.clearComposer()
		d.finish(fl.e, inbox.StateFailed, inbox.ReasonUndelivered, fmt.Sprintf("no UserPromptSubmit evidence after %d Enter retries", d.Cfg.SubmitRetries), "")
	}
}

// writeArtifact records what this attempt sends; it reports whether the
// record is durable (deliver pastes nothing otherwise).
func (d *Driver) writeArtifact(e *inbox.Entry, attempt int, sub guard.Submission) bool {
	sum := sha256.Sum256([]byte(sub.Text()))
	a := state.Artifact{ID: e.Msg.ID, Attempt: attempt, Resubmit: e.Status.Resubmits, Nonce: sub.Nonce(),
		Header: sub.Header(), SHA256: hex.EncodeToString(sum[:]), Bytes: len(sub.Text()), Mentions: sub.Mentions(),
		SentAt: d.now().UTC(), Text: sub.Text()}
	if err := d.S.ArtifactFile(e.Msg.ID, attempt).Write(a); err != nil {
		d.stateFailed("artifact of "+e.Msg.ID, err)
		return false
	}
	return true
}

// busyRecheck is how soon a delivery held back by a busy pane looks again.
const busyRecheck = 250 * time.Millisecond

// paneBusy reports whether the pane shows a running turn right now.
func (d *Driver) paneBusy() bool {
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	return err == nil && d.Ad.Busy(screen)
}
