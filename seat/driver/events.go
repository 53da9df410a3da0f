package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// drainEvents consumes every pending hook event in arrival order.
func (d *Driver) drainEvents() {
	names, err := d.S.PendingEvents()
	if err != nil {
		d.logf("events: %v", err)
		return
	}
	for _, name := range names {
		if d.unwritten.seen[name] {
			continue // acted on; its move to seen/ is pending (flushState)
		}
		ev, err := hookwire.ReadEvent(filepath.Join(d.S.EventsDir(), name))
		if err != nil {
			d.logf("event %s unreadable: %v (set aside)", name, err)
		} else {
			d.onHookEvent(ev)
		}
		if err := d.S.MarkSeen(name); errors.Is(err, fs.ErrNotExist) {
			d.logf("event %s: %v", name, err)
		} else if err != nil {
			d.unwritten.markSeenLater(name)
			d.stateFailed("event "+name, err)
		} else {
			d.keepLatestReading(ev.Kind, name)
		}
		if d.exit != nil {
			return
		}
	}
}

// keepLatestReading keeps one consumed reading of each kind in events/seen/:
// a status line or context reading comes with every turn, is superseded by
// the next one (context.toml holds the value; readers look for the newest),
// and one file per turn cost a page of disk each until the retention sweep
// (docs/state.md, "Retention"). Evidence events (prompts, turn ends) stay.
func (d *Driver) keepLatestReading(kind, name string) {
	if kind != hookwire.EvStatusLine && kind != hookwire.EvContextReading {
		return
	}
	if d.latestReading == nil {
		d.latestReading = map[string]string{}
	}
	if prev := d.latestReading[kind]; prev != "" {
		if err := os.Remove(filepath.Join(d.S.SeenDir(), prev)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("event %s: %v", prev, err)
		}
	}
	d.latestReading[kind] = name
}

func (d *Driver) onHookEvent(ev hookwire.Event) {
	f := ev.Fields
	switch ev.Kind {
	case hookwire.EvSessionStart:
		if !d.sessionMatches(f.SessionID) {
			d.logf("SessionStart for session %s (source %s), not the seat's %s: recorded, not trusted", f.SessionID, f.Source, d.sess.ID)
			if f.Source == "clear" && d.sess.ID != "" {
				d.restoreSession("a /clear pantty did not ask for started session " + f.SessionID)
			}
			return
		}
		if ev.ReceivedAt.Before(d.launchAt.Add(-time.Second)) && !d.adopted {
			return // an old start, from before this launch
		}
		if f.Source == "compact" {
			d.onCycleEvent(ev)
		}
		d.becomeReady("SessionStart source " + f.Source)
	case hookwire.EvUserPromptSubmit:
		d.onPromptSubmit(ev)
	case hookwire.EvStop, hookwire.EvStopFailure:
		d.onTurnEnd(ev)
	case hookwire.EvRequestFailed:
		d.onRequestFailed(ev)
	case hookwire.EvRetryWentThrough:
		d.onRetryWentThrough(ev)
	case hookwire.EvPaneDied:
		d.checkHarness("pane-died hook")
	case hookwire.EvClientAttached, hookwire.EvClientDetached:
		d.observeClients(ev.Kind)
	case hookwire.EvPreCompact, hookwire.EvPostCompact:
		d.onCycleEvent(ev)
	case hookwire.EvStatusLine:
		d.onStatusLine(ev)
	case hookwire.EvContextReading:
		d.onContextReading(ev)
	case hookwire.EvNotification:
		d.onNotification(ev)
	default:
		// SessionEnd and the rest: recorded in events/seen for telemetry.
	}
}

// timedOut runs a timer's judgement after reading the hook events already
// written. The loop's select picks at random among ready channels, so a
// record's wake-up may still be pending when a timer fires: a silence (no
// UserPromptSubmit, no Stop by the ceiling, no compaction evidence, no
// SessionStart, no command answer) is judged on every record there is.
func (d *Driver) timedOut(judge func()) {
	if d.drainEvents(); d.exit == nil {
		judge()
	}
}

// asksPerson is the heartbeat's words while a board message's turn waits on
// a question to a person: a harness's Notification here, an app server's
// approval request in onServerRequest.
const asksPerson = "the harness asks for a person"

// onNotification makes a harness that stopped mid-turn to ask a person (a
// permission or safety dialog: Claude Code's agent_needs_input,
// permission_prompt; Codex's PermissionRequest hook, translated) visible:
// the heartbeat's waiting names it, so status and recover show why the turn
// does not end. The turn itself is left alone: its ceiling still applies,
// and the next phase change clears the note (no hook says the person
// answered: the note stays until the turn ends). Idle reminders
// (idle_prompt) are not a question.
func (d *Driver) onNotification(ev hookwire.Event) {
	f := ev.Fields
	fl := d.flight
	if f.NotificationType == "" || f.NotificationType == "idle_prompt" || fl == nil ||
		fl.e.Status.State != inbox.StateSubmitted || !d.sessionMatches(f.SessionID) {
		return
	}
	if f.NotificationType == hookwire.NotePermissionRequest && d.onAppServer() {
		// The server's own request says the same, with who may answer it
		// (onServerRequest): the hook's copy would outlive a refusal.
		return
	}
	what := state.Cut(state.Redact(f.Message), 120)
	d.logf("message %s: the harness asks for a person mid-turn (%s): %s", fl.e.Msg.ID, f.NotificationType, what)
	d.noteQuestion(fmt.Sprintf("%s: %s (%s): %s", fl.e.Msg.ID, asksPerson, f.NotificationType, what))
}

// noteQuestion names a question to a person in the heartbeat, in the phases
// where a turn runs (machine.AsksPerson): in another (a person's client
// holds the box, relay) the phase already says a person is there.
func (d *Driver) noteQuestion(note string) {
	if _, ok := machine.Lookup(d.phase, machine.AsksPerson); ok {
		d.to(machine.AsksPerson, note)
	}
}

// onPromptSubmit binds UserPromptSubmit evidence to the flight by the guard's
// header (message id and nonce) and the session (machine.OnPrompt). A prompt
// pantty did not build is a person typing: recorded, and the seat counts as
// busy until its turn ends.
func (d *Driver) onPromptSubmit(ev hookwire.Event) {
	f := ev.Fields
	id, nonce, _, ok := guard.MatchHeader(f.Prompt)
	fl := d.flight
	switch machine.OnPrompt(fl.view(), machine.Prompt{Header: ok, HeaderID: id, HeaderNonce: nonce, SessionMatches: d.sessionMatches(f.SessionID)}) {
	case machine.Repeated:
		return
	case machine.Bind:
		st := &fl.e.Status
		st.State = inbox.StateSubmitted
		st.PromptID = f.PromptID
		st.SessionID = f.SessionID
		st.Evidence = ev.File
		st.SubmittedAt = ev.ReceivedAt
		d.writeStatus(fl.e)
		d.to(machine.Evidenced, fl.e.Msg.ID)
		return
	case machine.LateEvidence:
		if e, known := d.entries[id]; known && e.Status.Nonce == nonce && !inbox.Final(e.Status.State) {
			d.logf("late evidence for %s after it was settled: recorded", id)
			if e.Status.State == inbox.StateQueued && e.Status.Resubmits == 0 {
				// The harness took this very paste after the driver had queued
				// it again for want of evidence: the harness was killed while its
				// hook still ran, and the event landed 38 ms after the driver saw
				// the harness gone (soak seed 316271811, 2026-12-04). Its turn
				// died with that harness and the model saw the text once, so the
				// next paste must be pantty's one marked resubmission, never a
				// silent second copy.
				d.resubmitOrFail(e, "resubmission: the harness took the paste before it went (its evidence came late) and the turn was lost")
			}
		}
	}
	if c := d.cmdRun; c != nil && c.onServer && c.turn == f.PromptID && f.PromptID != "" {
		// The turn taken for the door's compaction (the first turn/started
		// after thread/compact/start) has a prompt: it is a person's, begun
		// in the same instant. The compaction's own turn is still to come.
		d.logf("turn %s has a prompt: a person's turn, not the compaction's (waiting for that one)", f.PromptID)
		c.turn = ""
		if d.as != nil {
			d.as.compaction = ""
		}
	}
	d.foreignTurn, d.foreignAt = f.PromptID, ev.ReceivedAt
	d.logf("prompt %s was not submitted by pantty (a person at the pane?): recorded, waiting for its turn end", f.PromptID)
}

// checkForeignTurn stops waiting for the end of a turn pantty did not submit
// once the pane shows no running turn: a person who interrupts their own turn
// with Escape fires no hook (measured on Claude Code), so that end never comes
// as an event. Run from the heartbeat tick; a turn younger than foreignSettle is
// left alone, since the harness may not show it as running yet.
func (d *Driver) checkForeignTurn() {
	if d.foreignTurn == "" || !d.ready || d.now().Sub(d.foreignAt) < foreignSettle || !d.paneShowsNoTurn() {
		return
	}
	d.logf("prompt %s: no turn runs any more and its end never came (interrupted?): no longer waiting", d.foreignTurn)
	d.foreignTurn = ""
}

// personsPromptEnded stops waiting for a person's prompt that ran inside
// the turn that just ended (turn, message id's): Codex steers a prompt sent
// while a turn runs into that turn, and its UserPromptSubmit carries the
// running turn's id, so that turn's end is the person's too. Measured on
// the app-server path (a person's Enter at the viewer during a board
// turn): without this the queue waited ~27 s for checkForeignTurn.
func (d *Driver) personsPromptEnded(turn, id string) {
	if turn != "" && d.foreignTurn == turn {
		d.logf("prompt %s ran inside message %s's turn (steered into it), which ended: no longer waiting", turn, id)
		d.foreignTurn = ""
	}
}

// paneShowsNoTurn reports whether a capture of the pane succeeded and shows no
// running turn; a failed capture counts as "cannot tell", so callers wait.
func (d *Driver) paneShowsNoTurn() bool {
	if d.onAppServer() {
		return d.threadIdle()
	}
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	return err == nil && !d.Ad.Busy(screen)
}

// foreignSettle is how old a foreign turn must be before an idle pane is taken
// as its end.
const foreignSettle = 2 * time.Second

// onTurnEnd closes the flight on a Stop or StopFailure tied to it by prompt_id
// and session_id (machine.OnTurnEnd).
func (d *Driver) onTurnEnd(ev hookwire.Event) {
	f := ev.Fields
	fl := d.flight
	v := machine.OnTurnEnd(fl.view(), machine.TurnEnd{
		Failure: ev.Kind == hookwire.EvStopFailure, PromptID: f.PromptID, SessionMatches: d.sessionMatches(f.SessionID),
		PersonsPrompt: d.foreignTurn, CancelEscaped: d.cancelEscaped(fl), TurnShape: d.Cfg.Shape == config.ShapeTurn,
	})
	if v.Ours() {
		d.learnSessionID(f.SessionID)
	}
	switch v {
	case machine.NotOurs:
	case machine.PersonsTurnEnded:
		d.foreignTurn = ""
	case machine.KeptForCancel:
		d.cancel.lateEnd = &ev
		d.logf("%s for %s after the cancel's Escape: kept for the cancel to settle", ev.Kind, fl.e.Msg.ID)
	case machine.ToEnvelope:
		// The result envelope decides a turn-spawned message; an outage seen
		// here (a failure that is not the message's) is remembered for it.
		if ev.Kind == hookwire.EvStopFailure {
			if class, _ := hookwire.ClassifyFailure(f.Error, f.LastAssistantMessage); class != machine.ClassWork {
				d.turnRefusal = f.Error + ": " + f.LastAssistantMessage
			}
		}
	case machine.TurnDone, machine.TurnFailed:
		e := fl.e
		d.flight = nil
		d.personsPromptEnded(f.PromptID, e.Msg.ID)
		d.keepReply(e, f.LastAssistantMessage)
		if v == machine.TurnDone {
			d.finish(e, inbox.StateProcessed, "", "", ev.File)
		} else if !d.onTurnFailed(e, f.Error, f.LastAssistantMessage) {
			d.finish(e, inbox.StateFailed, inbox.ReasonWorkError, f.Error+": "+f.LastAssistantMessage, ev.File)
		}
	}
}

// keepReply stores the turn's reply: the status keeps a preview of up to
// MaxReply bytes (what the probe checks) and the whole length; a longer reply
// (up to MaxReplyBytes) gets a file of its own, written before the status
// that makes the message final, so a reader that sees the final state finds
// the reply beside it.
func (d *Driver) keepReply(e *inbox.Entry, text string) {
	e.Status.Reply = state.Truncate(text, state.MaxReply)
	e.Status.ReplyBytes = len(text)
	whole := state.CapUTF8(text, state.MaxReplyBytes)
	if len(text) <= state.MaxReply {
		// The preview in the status is the whole reply: a file would only
		// repeat it, at a page of disk each (docs/state.md). A file an
		// earlier attempt left must go, or a reader would take it for this
		// turn's reply.
		if err := os.Remove(d.S.ReplyPath(e.Msg.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("reply %s: %v", e.Msg.ID, err)
		}
		return
	}
	if err := d.writeReply(e.Msg.ID, whole); err != nil {
		// Kept in memory and written again with the status after it
		// (durable.go): a full disk must not cost the reply.
		d.unwritten.keepReply(e.Msg.ID, whole)
		d.stateFailed("reply of "+e.Msg.ID, err)
	}
}

// writeReply stores a whole reply in inbox/replies/ (keepReply, and again
// from flushState after a failed write).
func (d *Driver) writeReply(id, text string) error {
	if err := os.MkdirAll(d.S.RepliesDir(), fsatomic.DirMode); err != nil {
		return err
	}
	return d.S.WriteRaw(d.S.ReplyPath(id), []byte(text))
}

// onServerRequest answers what the seat's server asks its clients. A
// question for a person (appserver.AsksPerson: an approval) on the seat's
// thread while the viewer runs is left to the person there, as the tmux
// path leaves a harness's dialog to a person (docs/real-seats.md,
// "4. Permissions for a seat nobody watches"): the viewer draws it and a
// person's answer there settles it (measured on 0.171.0), and the heartbeat
// names it while a board message's turn waits (the turn's ceiling still
// interrupts it). Anything else is refused at once, as is a question while
// no viewer runs (before the thread's first turn, between a viewer's death
// and its respawn): nobody could answer it, and the server would wait.
// Codex 0.171.0 takes a refused approval as a rejected command, and the
// turn goes on.
func (d *Driver) onServerRequest(as *asLink, m appserver.Message) {
	q, asks := appserver.AsksPerson(m)
	switch {
	case asks && q.ThreadID == as.thread && d.viewerW != nil:
		what := state.Cut(state.Redact(strings.TrimSpace(q.Command+" "+q.Reason)), 120)
		d.logf("app server asked %s (%s): left to the person at the viewer", m.Method, what)
		if as.questions == nil {
			as.questions = map[string]*json.RawMessage{}
		}
		as.questions[appserver.RequestKey(*m.ID)] = m.ID
		if fl := d.flight; fl != nil && fl.e.Status.State == inbox.StateSubmitted {
			d.noteQuestion(fmt.Sprintf("%s: %s (%s): %s", fl.e.Msg.ID, asksPerson, m.Method, what))
		}
		return
	case asks && q.ThreadID == as.thread:
		d.logf("app server asked %s: refused (no viewer runs to ask a person)", m.Method)
	case asks:
		d.logf("app server asked %s for thread %s, not the seat's: refused", m.Method, q.ThreadID)
	default:
		d.logf("app server asked %s: refused (nobody at a viewer answers this request)", m.Method)
	}
	refuse(as, m.ID, m.Method)
}

// refuse answers a server request with an error (off the loop: the write
// may wait on the socket).
func refuse(as *asLink, id *json.RawMessage, method string) {
	go as.conn.Reply(id, nil, &appserver.Error{Code: -32601, Message: "pantty answers no " + method})
}

// onQuestionResolved: a request on the seat's thread was answered (by the
// person at the viewer).
func (d *Driver) onQuestionResolved(as *asLink, request string) {
	d.dropQuestion(as, request, "the person's answer at the viewer came")
}

// dropQuestion forgets a question left to the person. When none waits any
// more, the heartbeat stops naming one and names again the message whose
// turn goes on; why says how the last one ended.
func (d *Driver) dropQuestion(as *asLink, request, why string) {
	if _, ok := as.questions[request]; !ok {
		return
	}
	delete(as.questions, request)
	if len(as.questions) > 0 {
		return
	}
	if fl := d.flight; fl != nil && strings.Contains(d.waiting, ": "+asksPerson+" (") {
		d.logf("message %s: %s; the turn goes on", fl.e.Msg.ID, why)
		d.to(machine.PersonAnswered, fl.e.Msg.ID)
	}
}

// refuseQuestions withdraws the questions left to a viewer that is gone:
// each is refused now (its respawn is not known to see them), so the turn
// goes on as with no viewer, rather than waiting for its ceiling.
func (d *Driver) refuseQuestions(why string) {
	as := d.as
	if as == nil || len(as.questions) == 0 {
		return
	}
	d.logf("%d question(s) left to the person at the viewer refused: %s", len(as.questions), why)
	for key, id := range as.questions {
		refuse(as, id, "question at a viewer that is gone")
		d.dropQuestion(as, key, "its question was refused with the viewer gone")
	}
}
