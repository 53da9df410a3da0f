package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/flight"
)

// way is how the driver gets a guarded message to the harness and stops its
// turn: the seam between the driver's decisions (what goes next, what the
// evidence says) and the harness's input. paneWay pastes into the TUI in
// the seat's tmux pane; asWay submits turns to Codex's app server
// (seat.toml transport = "app-server", appserver.go). Both answer on the
// loop: nothing here blocks it.
type way interface {
	// submit sends fl's submission, whose durable record is a (the
	// write-ahead rule: flight.WriteAhead ran first). Its evidence comes as
	// events; a failure is settled on the loop.
	submit(fl *delivery, sub guard.Submission, a flight.Ahead)
	// cancel stops the turn of c's message, verifies it stopped and settles
	// the message (cancelFinish), or answers why not (cancelEnd).
	cancel(c *cancelRun)
}

// paneWay is the tmux path: the flight package's paste, settle and Enter,
// the Escape for a cancel (submit.go, cancel.go).
type paneWay struct{ d *Driver }

// way is the seat's transport.
func (d *Driver) way() way {
	if d.onAppServer() {
		return asWay{d}
	}
	return paneWay{d}
}

// onAppServer reports whether the seat runs on its harness's app server
// (seat.toml transport = "app-server") rather than in a tmux pane.
func (d *Driver) onAppServer() bool {
	return d.Cfg.Transport == config.TransportAppServer
}

// threadIdle reports whether the app server runs and no turn runs on the
// seat's thread (turn/start on a busy thread steers the running turn).
func (d *Driver) threadIdle() bool {
	return d.as != nil && !d.as.connGone && d.as.turn == ""
}

// errNoPane is every pane operation of a seat on its app server.
var errNoPane = errors.New("the seat runs on its app server: it has no pane")

// noPane is the pane of a seat on its app server: there is none, and a
// look or a key that reaches for it fails (never a tmux target "" that
// tmux would match to another session's pane).
type noPane struct{}

func (noPane) Capture(context.Context, string) (string, error)   { return "", errNoPane }
func (noPane) SendKeys(context.Context, string, ...string) error { return errNoPane }
func (noPane) Paste(context.Context, string, []byte) error       { return errNoPane }

// asWay is the app-server path's submission and cancel: turn/start with the
// guarded text as data (appserver.Conn.Submit: there is no composer, no
// dispatch, no Enter), turn/interrupt verified by the turn's turn/completed.
// The evidence is what it is on the tmux path: pantty's hooks run in the
// app server, so UserPromptSubmit (the guard header, the turn's id) and Stop
// arrive in events/ and bind as before (events.go); turn/start's answer and
// turn/completed are a second witness, read for what the hooks do not say.
type asWay struct{ d *Driver }

// submit sends fl's submission as turn/start. The write-ahead record is
// durable (a); the text sent is the record's, which is the submission's.
func (w asWay) submit(fl *delivery, sub guard.Submission, a flight.Ahead) {
	d := w.d
	as := d.as
	if as == nil || as.connGone || a.Text() != sub.Text() {
		// maybeSubmit holds while no server runs; a record of other text is
		// the door's rule (Submit) on this path too.
		d.flight = nil
		d.requeue(fl.e, "not sent: the app server was not there")
		d.to(machine.Requeued, "")
		return
	}
	as.turn = turnPending
	as.sentAt, as.answered = d.now(), ""
	conn, thread := as.conn, as.thread
	d.onLoop(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), asCallLimit)
		defer cancel()
		turn, err := conn.Submit(ctx, thread, sub)
		return func() { d.onTurnStarted(as, fl, turn, err) }
	})
}

// onTurnStarted takes turn/start's answer: the turn the harness accepted,
// whose id its UserPromptSubmit and Stop carry. It binds the message as
// submitted when the hook's evidence has not come first (the answer is the
// harness's own word that the turn runs with this text). A call that failed
// may still have reached the server: the harness's records decide
// (requeueUnlessReceived), never a second unmarked copy.
func (d *Driver) onTurnStarted(as *asLink, fl *delivery, turn appserver.Turn, err error) {
	if as == d.as && as.turn == turnPending && turn.ID != as.ended {
		as.turn = turn.ID // "" when it failed: the thread is idle again
	} else if as.turn == turnPending {
		as.turn = ""
	}
	if d.flight != fl {
		return // settled meanwhile (the server went, a cancel)
	}
	e := fl.e
	if err != nil {
		d.logf("turn/start for %s: %v", e.Msg.ID, err)
		if e.Status.State == inbox.StateSubmitted {
			return // its evidence came all the same: the turn ends it
		}
		var refused *appserver.Error
		if !errors.As(err, &refused) && as == d.as && !as.connGone {
			// No answer (the call's limit passed): the server may have
			// taken the turn and start it yet, beside a requeued copy. It
			// is ended; its exit settles the message by the harness's
			// records (harnessGone), as a harness that died mid-submission.
			d.logf("turn/start for %s unanswered: ending the app server (pid %d) so no late turn runs", e.Msg.ID, as.srv.Pid())
			as.connGone = true
			go as.srv.Stop()
			return
		}
		d.flight = nil
		d.requeueUnlessReceived(e, "turn/start failed: "+err.Error())
		d.to(machine.Requeued, "")
		return
	}
	fl.lookFrom = d.now()
	if as == d.as && !as.sentAt.IsZero() {
		d.logf("message %s: turn/start answered in %s: turn %s", e.Msg.ID, asMS(fl.lookFrom.Sub(as.sentAt)), turn.ID)
		as.answered = turn.ID
		d.timeTurn(as)
	}
	st := &e.Status
	if st.State == inbox.StateSubmitted {
		if st.PromptID != turn.ID {
			d.logf("message %s: its UserPromptSubmit named turn %s, turn/start answered %s", e.Msg.ID, st.PromptID, turn.ID)
		}
		return
	}
	st.State = inbox.StateSubmitted
	st.PromptID = turn.ID
	st.SessionID = as.thread
	st.Evidence = "app-server turn/start: turn " + turn.ID
	st.SubmittedAt = d.now().UTC()
	d.writeStatus(e)
	d.to(machine.Evidenced, e.Msg.ID)
	if as == d.as && turn.ID == as.ended {
		// Its turn/completed came first (another channel of the loop's
		// select): settled now, not at the turn ceiling.
		d.onTurnCompleted(as, as.lastEnd)
	}
}

// onNote takes one message from the server: the thread's turns starting and
// ending. A request from the server (an approval) is refused: nothing on
// this path answers one yet, and the server waits for an answer.
func (d *Driver) onNote(m appserver.Message) {
	as := d.as
	if m.ID != nil {
		id, conn := m.ID, as.conn
		d.logf("app server asked %s: refused (pantty answers no server request on this path)", m.Method)
		go conn.Reply(id, nil, &appserver.Error{Code: -32601, Message: "pantty answers no " + m.Method})
		return
	}
	switch m.Method {
	case appserver.MethodTurnStarted:
		var n appserver.TurnNote
		if !jsonInto(m.Params, &n) || n.ThreadID != as.thread {
			break
		}
		if as.turn != turnPending {
			as.turn = n.Turn.ID
		}
		as.started, as.startedAt = n.Turn.ID, d.now()
		d.timeTurn(as)
	case appserver.MethodTurnCompleted:
		if end, ok := appserver.TurnEnd(m); ok && end.ThreadID == as.thread {
			d.onTurnCompleted(as, end)
		}
	}
}

// timeTurn logs how long the board's turn took to start (turn/start sent →
// its turn/started), once both turn/start's answer and the turn/started
// that names the same turn are in: they come on two channels, either first.
func (d *Driver) timeTurn(as *asLink) {
	if as.sentAt.IsZero() || as.answered == "" || as.answered != as.started {
		return
	}
	d.logf("turn %s started (turn/started) %s after its turn/start", as.started, asMS(as.startedAt.Sub(as.sentAt)))
	as.sentAt = time.Time{}
}

// asMS is a latency as driver.log gives it: to 0.1 ms.
func asMS(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }

// onTurnCompleted is a turn's end on the seat's thread: the thread is idle
// again (the next message may go), and a turn of the message in flight that
// its Stop hook has not settled is settled here, with turn/completed's
// reply. The hook's event, if it is already in events/, is taken first, so
// the hook stays the evidence wherever it came in time.
func (d *Driver) onTurnCompleted(as *asLink, end appserver.End) {
	as.ended, as.lastEnd = end.TurnID, end
	if as.turn == end.TurnID {
		as.turn = ""
	}
	if !as.hadTurn {
		as.hadTurn = true
		d.ensureViewer("the thread's first turn")
	}
	d.drainEvents()
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitted || fl.e.Status.PromptID != end.TurnID {
		return
	}
	e := fl.e
	if c := d.cancel; c != nil && c.fl == fl {
		if end.Status == appserver.StatusInterrupted {
			d.logf("message %s: turn %s interrupted (turn/completed)", e.Msg.ID, end.TurnID)
			d.cancelFinish(c)
			return
		}
		d.cancelEnd(c, fmt.Errorf("turn %s ended %s before the interrupt took", end.TurnID, end.Status))
		if d.flight != fl {
			return // the kept Stop settled it
		}
	}
	switch end.Status {
	case appserver.StatusCompleted:
		d.flight = nil
		d.keepReply(e, end.Reply)
		d.finish(e, inbox.StateProcessed, "", "", "app-server turn/completed: turn "+end.TurnID)
	case appserver.StatusInterrupted:
		d.flight = nil
		d.finish(e, inbox.StateFailed, inbox.ReasonWorkError, "the turn was interrupted (not by pantty: a person at an attached TUI?)", "app-server turn/completed: turn "+end.TurnID)
	default:
		// A failed turn: the PostModelRequest hook's StopFailure carries
		// the failure in the driver's words (measured for 401 on a seat);
		// without it the error is classified from turn/completed's text.
		msg := ""
		if end.Error != nil {
			msg = end.Error.Message
		}
		d.logf("message %s: turn %s %s (%s %d) with no StopFailure from the hook", e.Msg.ID, end.TurnID, end.Status, end.Info, end.HTTPStatus)
		d.flight = nil
		if !d.onTurnFailed(e, end.Info, msg) {
			d.finish(e, inbox.StateFailed, inbox.ReasonWorkError, end.Info+": "+msg, "app-server turn/completed: turn "+end.TurnID)
		}
	}
}

// cancel interrupts the message's turn (turn/interrupt); its
// turn/completed with status interrupted verifies it (onTurnCompleted).
// A message whose turn has no id yet (turn/start unanswered) cannot be
// interrupted: the cancel says so and the message runs on.
func (w asWay) cancel(c *cancelRun) {
	d := w.d
	as, st := d.as, c.fl.e.Status
	if as == nil || st.State != inbox.StateSubmitted || st.PromptID == "" {
		d.cancelEnd(c, errors.New("the turn has not started on the app server yet: nothing to interrupt (try again)"))
		return
	}
	c.escaped = true // a Stop from now on is the interrupted turn's: kept for the cancel
	conn, thread, turn := as.conn, as.thread, st.PromptID
	d.onLoop(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), asCallLimit)
		defer cancel()
		err := conn.Interrupt(ctx, thread, turn)
		return func() {
			if err != nil && d.cancelCurrent(c) {
				d.cancelEnd(c, fmt.Errorf("turn/interrupt: %w", err))
				return
			}
			// Verified only by the turn's turn/completed, within the bound
			// the pane's cancel has: one that never comes (or names another
			// turn) must not hold the message and the queue for good.
			d.onLoopAfter(cancelVerify, func() {
				if d.cancelCurrent(c) {
					d.cancelEnd(c, fmt.Errorf("no turn/completed for turn %s within %s of turn/interrupt: the turn runs on", turn, cancelVerify))
				}
			})
		}
	})
}

// jsonInto decodes a notification's params into v and reports whether it
// could.
func jsonInto(raw json.RawMessage, v any) bool { return json.Unmarshal(raw, v) == nil }
