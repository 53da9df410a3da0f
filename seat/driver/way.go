package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
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
	// command sends f's adapter-authored command through the seat's command
	// door; commandEntered hears, on the loop, that it went or why not, and
	// its evidence (the hooks, the harness's answer) follows as events.
	command(f *cmdFlight)
	// notFree says why no command may go to the harness now, or "" (unknown:
	// the harness could not be looked at).
	notFree() (why string, unknown bool)
}

// paneWay is the tmux path: the flight package's paste, settle and Enter,
// the Escape for a cancel (submit.go, cancel.go), the command door's paste
// (cmdflight.go).
type paneWay struct{ d *Driver }

func (w paneWay) command(f *cmdFlight)                { w.d.pasteCommand(f) }
func (w paneWay) notFree() (why string, unknown bool) { return w.d.paneNotFree() }

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
// ending, and the server's own requests (onServerRequest).
func (d *Driver) onNote(m appserver.Message) {
	as := d.as
	if m.ID != nil {
		d.onServerRequest(as, m)
		return
	}
	switch m.Method {
	case appserver.MethodTurnStarted:
		var n appserver.TurnNote
		if !jsonInto(m.Params, &n) || n.ThreadID != as.thread {
			return
		}
		if as.turn != turnPending {
			as.turn = n.Turn.ID
		}
		as.started, as.startedAt = n.Turn.ID, d.now()
		d.timeTurn(as)
		if f := d.cmdRun; f != nil && f.onServer && f.turn == "" && d.flight == nil {
			f.turn = n.Turn.ID // the compaction's turn (nothing else was sent)
			as.compaction = f.turn
		}
	case appserver.MethodTurnCompleted:
		if end, ok := appserver.TurnEnd(m); ok && end.ThreadID == as.thread {
			as.questions = nil // one turn runs at a time: its questions end with it
			d.onTurnCompleted(as, end)
		}
	case appserver.MethodThreadStatus:
		if thread, idle, ok := appserver.ThreadIdle(m); ok && thread == as.thread {
			as.idle, as.idleAt = idle, d.now()
			if idle && as.turn != "" && as.turn != turnPending {
				d.watchIdle(as, as.turn)
			}
		}
	case appserver.MethodTokenUsage:
		if c, ok := appserver.ContextOf(m); ok && c.ThreadID == as.thread && c.Input > 0 && !d.compacting(c.TurnID) {
			// The reading the PostModelRequest hook also gives (the same
			// request's input tokens; the window as the rollout has it),
			// straight from the server: the hook's is not read after it.
			as.readings = true
			d.applyReading(state.StatusReading{SessionID: as.thread, Occupancy: int(c.Input), Window: int(c.Window), Model: d.ctxr.Model},
				tokenUsageSource, d.now().UTC())
		}
	case appserver.MethodRateLimits:
		d.onRateLimits(m)
	case appserver.MethodRequestResolved:
		if thread, request, ok := appserver.Resolved(m); ok && thread == as.thread {
			d.onQuestionResolved(as, request)
		}
	}
}

// onRateLimits takes the account's rate-limit windows, which Codex forwards
// before the turn that carried them ends (measured on 0.171.0): a window used
// up with a reset ahead and no credits to go on (appserver.LimitReached) is
// recorded as the provider's block until that reset, as a refused turn's is
// (providerRefused), so the next boundary holds the queue as a provider wait
// (followLadder) instead of sending a message only to have it refused. A
// block already holding as long is left as it is (RecordBlock would keep its
// time but take these words). The message in flight is not touched: its turn
// ends as it ends.
func (d *Driver) onRateLimits(m appserver.Message) {
	now := d.now()
	x, ok := appserver.LimitReached(m, now)
	if !ok {
		if appserver.LimitsClear(m) {
			// A later reading says the account can go on (a window that
			// reset early, credits bought): a block this path predicted ends.
			fromNote := func(b state.Block) bool {
				return b.Error == rateLimitsError && strings.HasPrefix(b.Text, appserver.LimitsWords)
			}
			if gone, err := outage.ReleaseBlock(d.S.Home, d.Cfg.Provider, fromNote, now); err != nil {
				d.logf("provider block for %s: %v", d.Cfg.Provider, err)
			} else if gone {
				d.logf("provider %s: account/rateLimits/updated shows no window used up: the block it predicted is released", d.Cfg.Provider)
			}
		}
		return
	}
	// A prediction is trusted no further than a refusal's parsed reset
	// (provider_max_wait, 6 h by default): a weekly window's reset days
	// ahead must not silence every seat on the provider that long unasked.
	if max := d.Cfg.Recovery.ProviderMaxWait.Duration; max > 0 && x.Until.After(now.Add(max)) {
		x.Until = now.Add(max)
	}
	if bs, err := outage.ReadBlocks(d.S.Home); err == nil {
		if cur, held := bs.Active(d.Cfg.Provider, now); held && !cur.Until.Before(x.Until) {
			return // a refusal already holds as long: its own words stay
		}
	}
	b := state.Block{Until: x.Until, Since: now.UTC(), Error: rateLimitsError, Text: x.Words, Parsed: true, Seat: d.S.Name}
	if err := outage.RecordBlock(d.S.Home, d.Cfg.Provider, b, now); err != nil {
		d.logf("provider block for %s: %v (kept in this driver)", d.Cfg.Provider, err)
	}
	d.logf("provider %s: %s (account/rateLimits/updated): no message goes before %s", d.Cfg.Provider, x.Words, x.Until.Format(time.RFC3339))
}

// rateLimitsError names a used-up window's block as the refusal it stands
// for: the usage_limit a Codex turn refused for it is named (ClassifyError).
const rateLimitsError = "usage_limit"

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

// idleGrace bounds how long a turn the server already called idle may
// wait for its turn/completed: in every recorded turn (0.171.0) the idle
// status came just before it, in the same millisecond. A var for the tests.
var idleGrace = 10 * time.Second

// watchIdle ends, after idleGrace, a turn whose turn/completed never came
// though the server said the thread went idle: the thread's busy state
// (as.turn) would otherwise hold the queue for good, and on this path the
// heartbeat's no-turn checks read that same state. A turn/completed, a new
// turn or a new launch meanwhile makes it do nothing.
func (d *Driver) watchIdle(as *asLink, turn string) {
	since := as.idleAt
	d.onLoopAfter(idleGrace, func() {
		if d.as != as || as.turn != turn || !as.idle || !as.idleAt.Equal(since) {
			return
		}
		d.logf("turn %s: the thread has been idle %s (thread/status/changed) and its turn/completed never came: taken as ended", turn, idleGrace)
		as.turn = ""
		if d.foreignTurn == turn {
			d.foreignTurn = ""
		}
	})
}

// tokenUsageSource names where an app-server seat's context reading comes from.
const tokenUsageSource = "codex app server thread/tokenUsage/updated last.inputTokens (the request's whole input) against modelContextWindow"

// compacting reports whether turn is the command door's compaction on the
// server (or one whose turn is not known yet): its summarisation requests'
// usage is no reading of the thread's context, also when it comes after the
// cycle ended on the hooks.
func (d *Driver) compacting(turn string) bool {
	f := d.cmdRun
	return f != nil && f.onServer && f.turn == "" || turn != "" && turn == d.as.compaction
}

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
	if d.foreignTurn == end.TurnID {
		d.foreignTurn = "" // a person's turn (or one steered into a board turn) ended
	}
	if !as.hadTurn {
		as.hadTurn = true
		d.ensureViewer("the thread's first turn")
	}
	if f := d.cmdRun; f != nil && f.onServer && f.turn == end.TurnID {
		d.onCommandTurnEnd(f, end)
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
		// without it the error is named from turn/completed's words as the
		// hook names the same words (Capabilities.FailureName).
		msg, name := "", end.Info
		if end.Error != nil {
			msg = end.Error.Message
		}
		if named := d.Ad.Caps().FailureName; named != nil {
			name = named(msg)
		}
		d.logf("message %s: turn %s %s (%s %d, named %s) with no StopFailure from the hook", e.Msg.ID, end.TurnID, end.Status, end.Info, end.HTTPStatus, name)
		d.flight = nil
		if !d.onTurnFailed(e, name, msg) {
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

// The app-server path's command door: the only command with an equivalent
// on the server is /compact, sent as thread/compact/start (measured on
// 0.171.0: answered {} at once; the compaction runs as a turn of its own,
// turn/started … turn/completed, and pantty's PreCompact and PostCompact
// hooks fire in the server as in the TUI). The command's durable record is
// written first, as the pane's door writes it before its paste; the hooks
// are its evidence as on the tmux path (onCommandEvidence, onCycleEvent),
// and the compaction turn's end is the refusal's witness: a PreCompact
// block ends it interrupted, an API failure failed (onCommandTurnEnd).

// errServerRefused marks a command the app server refused with a JSON-RPC
// error: nothing started, and that is known.
var errServerRefused = errors.New("the app server refused it")

// onServer reports whether the seat's command door has an equivalent of c
// on the app server.
func onServer(c guard.Command) bool { return c.Name() == "compact" && c.Args() == "" }

// notFree: a command goes only on an idle thread (thread/compact/start on a
// busy one is a second turn's business the server decides; it is not asked).
func (w asWay) notFree() (string, bool) {
	switch d := w.d; {
	case d.as == nil || d.as.connGone:
		return "the app server is not running", false
	case d.as.turn != "":
		return "a turn is running on the seat's thread", false
	}
	return "", false
}

// command sends f's /compact as thread/compact/start; any other command
// has no equivalent on this path and is refused unsent.
func (w asWay) command(f *cmdFlight) {
	d := w.d
	if !onServer(f.cmd) {
		d.commandEntered(f, fmt.Errorf("%w: %s has no equivalent on the app server (only /compact, as thread/compact/start)", errServerRefused, f.cmd.Text()))
		return
	}
	if why, _ := w.notFree(); why != "" {
		d.commandEntered(f, fmt.Errorf("%w: %s", errServerRefused, why))
		return
	}
	if f.ahead.Text() == "" {
		ahead, err := d.commandAhead(f.cmd)
		if err != nil {
			d.commandEntered(f, err)
			return
		}
		f.ahead = ahead
	}
	f.onServer = true
	conn, thread := d.as.conn, d.as.thread
	d.onLoop(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), asCallLimit)
		defer cancel()
		err := conn.Compact(ctx, thread)
		return func() {
			var refused *appserver.Error
			if errors.As(err, &refused) {
				err = fmt.Errorf("%w: thread/compact/start: %v", errServerRefused, err)
			} else if err != nil {
				err = fmt.Errorf("thread/compact/start unanswered: %w", err)
			}
			d.commandEntered(f, err)
		}
	})
}

// onCommandTurnEnd is the end of the turn the command door's compaction
// started. The hooks are the evidence of one that ran (read first); a turn
// that ended otherwise is the server's refusal, in its words.
func (d *Driver) onCommandTurnEnd(f *cmdFlight, end appserver.End) {
	d.drainEvents()
	if d.cmdRun != f || end.Status == appserver.StatusCompleted {
		return // accepted by its hooks, or their events are still coming
	}
	why := fmt.Sprintf("the %s app server ended %s's turn %s %s", d.Ad.Name(), f.cmd.Text(), end.TurnID, end.Status)
	if end.Error != nil {
		why += ": " + end.Error.Message
	}
	switch {
	case f.blocked != "":
		why += ": pantty's " + hookwire.EvPreCompact + " hook blocked it: " + f.blocked
	case end.Status == appserver.StatusInterrupted:
		why += " (a hook's block, or a person's interrupt)"
	}
	d.commandRefused(why, false)
}

// commandLate is the app-server path's end of the accept window with no
// start hook: a compaction turn still running is late, not missing, until
// commandBusyCap; otherwise the server did not run the command.
func (d *Driver) commandLate(f *cmdFlight, what string) {
	if as := d.as; f.turn != "" && as != nil && as.turn == f.turn && d.now().Sub(f.sent) < commandBusyCap {
		d.cmdT.set(commandPoll)
		return
	}
	d.commandRefused(fmt.Sprintf("%s within %s: the %s app server did not run %s", what, hookwire.CommandAcceptWindow, d.Ad.Name(), f.cmd.Text()), false)
}
