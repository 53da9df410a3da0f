// Package driver is the seat's work loop: the one process per seat that holds
// owner.lock, is the only writer to the seat's pane, and moves each inbox
// message only on evidence (hook events, the pane, the harness's transcript).
//
// It reaches the harness one of two ways (way.go): pasting into its TUI in
// the seat's tmux pane, or, for a codex seat with transport = "app-server",
// submitting turns to the seat's own Codex app server, which the driver
// starts and treats as the harness process (appserver.go).
//
// It runs internal/machine's transitions and decisions: one select over hook
// events, inbox and control files (fsnotify), pane watches, process exits and
// timers with stated reasons; nothing it waits for blocks the loop. Everything
// it knows it writes as the seat's records (package seat), which is all any
// reader sees: telemetry, gates, recover and feed never import this package
// (internal/layering checks it), and only the binary's hidden `__drive` verb
// runs it (Run).
package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// server is what the driver does to its seat's tmux server: twelve
// operations of tmux.Client, named here so a test can run the driver's
// decisions against a scripted pane (driver_test.go's fakeServer) instead of
// a real server.
type server interface {
	Capture(ctx context.Context, paneID string) (string, error)
	CaptureWithHistory(ctx context.Context, paneID string, history int) (string, error)
	SendKeys(ctx context.Context, paneID string, keys ...string) error
	Paste(ctx context.Context, paneID string, text []byte) error
	ListPanes(ctx context.Context) ([]tmux.Pane, error)
	Clients(ctx context.Context) ([]tmux.ClientInfo, error)
	WatchSession(ctx context.Context, name string) (*tmux.Watch, error)
	SetHook(ctx context.Context, session, hook, command string) error
	NewSession(ctx context.Context, o tmux.NewSessionOpts) (tmux.Pane, error)
	RespawnPane(ctx context.Context, paneID string, argv []string, dir string) (tmux.Pane, error)
	KillSession(ctx context.Context, name string) error
	Reap(ctx context.Context) error
}

// Driver is the seat's work loop: one process per seat that holds owner.lock for
// its whole life, is the only writer to the seat's pane, consumes the inbox one
// message at a time and moves each message only on evidence. Everything it waits
// for arrives as an event (fsnotify on inbox, events and control; tmux's
// control-mode client for a vanished server) or a timer with a stated reason.
type Driver struct {
	S      state.Seat
	Cfg    config.Config
	Ad     harness.Adapter
	Lock   *seat.Lock
	Pantty string      // absolute path of this binary, for hooks and the pane's exec
	Log    *log.Logger // driver.log
	Report func(seat.Progress)

	tm       server           // the seat's tmux server (tmux.New); a scripted one in tests
	clock    func() time.Time // nil: the wall clock; a test's own in transcripts
	sess     state.Session
	autoWhy  string // why transport = "auto" took Cfg.Transport ("" when declared)
	phase    machine.Phase
	waiting  string
	ready    bool
	readying bool // the harness started; the input box is being looked for (becomeReady)
	adopted  bool
	launchAt time.Time
	termAt   time.Time       // harnessGone sent SIGTERM to what ran on of the launch (endPrevious)
	paneDone chan paneAnswer // pane watches report here (inputbox.go)

	entries     map[string]*inbox.Entry
	order       []*inbox.Entry
	flight      *delivery
	cancel      *cancelRun // a cancel of the flight watching the pane (cancel.go)
	foreignTurn string     // prompt_id of a turn pantty did not submit (a person typing)
	foreignAt   time.Time
	cmds        []state.Request
	notBefore   time.Time   // provider wait: nothing is submitted before this
	blocked     string      // why nothing may be submitted at all (e.g. unsupported dispatch facts)
	held        string      // why the pane holds the queue (a dialog, a person's draft: inputbox.go), "" when it does not
	notified    *tmux.Watch // the watch whose pane-output wake-ups are on for a hold
	boxT        timer       // a held pane's look when no watch reports its changes
	strandedCmd string      // a command pasted but not entered (a dialog came first): pantty's own text in the box
	strayed     string      // why the harness left the seat's session (an unasked /clear) during relay: restored when relay ends
	pruned      time.Time   // last retention sweep

	cycle        *cycleRun                // the compaction cycle in progress
	lastCycle    string                   // a finished cycle still waiting for its "after" reading
	lastCycleEnd time.Time                // the policy compacts again only on a newer reading
	ctxr         state.Context            // the latest context reading (context.toml)
	floorPending string                   // why the next reading measures the floor ("" = not pending)
	probes       map[string]state.Request // probe message id → the request waiting for it
	lateReadings []hookwire.Event         // context readings that came before a self-named session id was recorded
	cycleT       timer
	cmdRun       *cmdFlight // a command the door pasted, waiting for the harness to take it
	cmdHeld      string     // why the pane was not free for the first queued command
	cmdT         timer      // command door: the accept window and the wait for a free seat
	relaunchT    timer      // a backed-off relaunch of a harness that keeps exiting
	// exits counts the harness's exits in a row (machine.AfterExit);
	// lastExit is the latest exit's record (harness-exit.toml).
	exits        machine.Exits
	lastExit     state.HarnessExit
	mode         state.Mode          // direct or relay (mode.toml)
	relayPinned  bool                // `seat attach` declared relay; left when it returns
	relayIgnored map[int]bool        // clients `seat relay --off` told the driver to ignore
	harnessW     *procWatch          // the harness process (pidfd): its exit wakes the loop
	stepDone     bool                // step shape: the current session already ran its step
	turn         *turnProc           // turn shape: the harness process of the flight
	turnDone     chan turnDone       // turn shape: its waiter reports here
	turnRefusal  string              // turn shape: an outage (not a work failure) seen in StopFailure for the flight
	outage       *heldOutage         // a failure of the means or the provider the queue is held for
	sinceRefresh int                 // messages processed since the last refresh (fixed policy)
	selfRefresh  bool                // the seat asked for a refresh (self policy)
	facts        guard.DispatchFacts // the measured dispatch predicate the guard is built against
	drop         string              // the drop directory watched (isolation on), "" when none
	unwritten    unwritten           // records a failed write left pending: the queue holds (durable.go)
	// latestReading is the one consumed status line / context reading of
	// each kind kept in events/seen/ (keepLatestReading).
	latestReading map[string]string

	w         *fsnotify.Watcher
	watch     *tmux.Watch
	keys      *tmux.Conn // the launch's control-mode client for pane commands (paneKeys); nil: a process per command
	gone      <-chan struct{}
	evidenceT timer
	ceilingT  timer
	waitT     timer
	readyT    timer
	exit      *int
	// watching counts pane watches whose answer the loop has not taken yet.
	watching int
	// as is the seat's app server, connection and thread while one runs
	// (transport = "app-server": appserver.go); rpcDone is where calls on it
	// answer the loop.
	as      *asLink
	rpcDone chan asAnswer
	// viewerAt is when the app-server seat's viewer pane was last opened;
	// viewerT opens it again after a quick death (appserver.go).
	viewerAt time.Time
	viewerT  timer
	viewerW  *procWatch // the viewer's pane process (pidfd): tmux can lose its SIGCHLD
}

// delivery is the one message in flight, between paste and turn end: its
// keys go through the flight package (Submit), its evidence window and
// Enter retries are the driver's.
type delivery struct {
	e          *inbox.Entry
	sub        guard.Submission
	enterTries int
	recovered  bool // inherited from a driver that died mid-delivery (no Submission)
	// entering: pasted, its Enter not yet sent (the paste settles in a
	// pane watch): the box holds pantty's own text, not a person's draft.
	entering bool
	// notPasted says why the paste was not made (the box was not free when
	// fillBox looked): the message goes back to the queue, unsent.
	notPasted string
	// lookFrom is when Enter last went, or the silent pane was last looked
	// at: the evidence timer runs submit_timeout from it (syncTimers).
	lookFrom time.Time
	// ceilingSpent: a cancel at the turn ceiling did not hold; the ceiling is
	// not armed again for this turn.
	ceilingSpent bool
	// retryingSince: when the harness was first seen retrying a failed
	// request inside this turn (onRequestFailed): the ceiling grants the
	// harness's retry budget from then (machine.Deadlines).
	retryingSince time.Time
}

// view is the flight as machine.OnPrompt and machine.OnTurnEnd bind the
// harness's turn events to it; nil when nothing is in flight.
func (fl *delivery) view() *machine.InFlight {
	if fl == nil {
		return nil
	}
	st := fl.e.Status
	return &machine.InFlight{ID: fl.e.Msg.ID, Nonce: st.Nonce, Submitted: st.State == inbox.StateSubmitted, PromptID: st.PromptID}
}

func (d *Driver) logf(format string, a ...any) {
	if d.Log != nil {
		d.Log.Printf(format, a...)
	}
}

func (d *Driver) report(p seat.Progress) {
	if d.Report != nil {
		d.Report(p)
	}
}

// Loop starts (or adopts) the harness, reports readiness and runs the loop until
// a stop or release. It returns the process exit code.
func (d *Driver) Loop() int {
	code := 0
	d.exit = nil
	d.S.CleanTmp()
	if err := d.setup(); err != nil {
		d.logf("start failed: %v", err)
		d.report(seat.Progress{State: "error", Text: err.Error()})
		if errors.Is(err, state.ErrUnobservable) {
			return 4
		}
		return 1
	}
	defer d.teardown()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	hb := time.NewTicker(d.Cfg.HeartbeatInterval.Duration)
	defer hb.Stop()
	d.beat()
	d.pump()
	for d.exit == nil {
		d.syncTimers()
		select {
		case ev, ok := <-d.w.Events:
			if !ok {
				return 1
			}
			d.onFSEvent(ev)
		case err := <-d.w.Errors:
			// An overflow means events were dropped: rescan everything.
			d.logf("watch: %v (rescanning)", err)
			d.rescan()
		case <-hb.C:
			if d.Cfg.Shape != config.ShapeTurn {
				d.checkHarness("heartbeat check")
				d.observeClients("heartbeat check")
			}
			d.checkForeignTurn()
			d.checkLostTurnEnd()
			if d.now().Sub(d.pruned) > pruneEvery && d.flight == nil {
				d.prune()
				d.entries, d.order = nil, nil
				d.rescan()
			}
			d.beat()
		case pid := <-d.harnessW.done():
			d.harnessW = nil
			if pid == d.sess.PanePID {
				d.reapAndCheck("harness process exited")
			}
		case <-d.paneChanged():
			// A held pane printed something: pump looks at the box again.
		case <-d.boxT.C():
			d.boxT.stop() // the same, where no watch reports changes
		case <-d.gone:
			d.gone = nil
			d.checkHarness("tmux control client ended")
		case <-d.evidenceT.C():
			d.evidenceT.stop()
			d.timedOut(d.onEvidenceTimeout)
		case <-d.ceilingT.C():
			d.ceilingT.stop()
			d.timedOut(func() {
				d.cancelTurn(inbox.ReasonCeiling, func(err error) {
					if err != nil {
						d.logf("cancel at the turn ceiling: %v", err)
					}
				})
			})
		case <-d.waitT.C():
			// A wait ended (provider block, not_before, a busy pane): pump
			// decides what the seat does next and records its phase.
			d.waitT.stop()
		case r := <-d.turnDone:
			d.onTurnDone(r)
		case a := <-d.paneDone:
			d.onPaneAnswer(a)
		case a := <-d.rpcDone:
			d.onAnswer(a)
		case m, ok := <-d.notes():
			if ok {
				d.onNote(m)
			} else {
				d.onConnEnded()
			}
		case <-d.serverDone():
			d.onServerExit("app server exit")
		case <-d.viewerW.done():
			d.viewerW = nil
			d.refuseQuestions("the viewer pane's process exited")
			d.reapAndCheck("the viewer pane's process exited")
		case <-d.viewerT.C():
			d.viewerT.stop()
			d.ensureViewer("a viewer that died quickly, opened again")
		case <-d.relaunchT.C():
			d.relaunchNow()
		case <-d.cmdT.C():
			d.cmdT.stop()
			d.timedOut(d.onCommandTick)
		case <-d.cycleT.C():
			d.cycleT.stop()
			d.timedOut(d.onCycleTimeout)
		case <-d.readyT.C():
			d.readyT.stop()
			d.timedOut(d.onReadyTimeout)
		case <-d.unwritten.retryT.C():
			d.flushState()
		case sig := <-sigs:
			d.logf("signal %v: releasing the seat (the harness keeps running)", sig)
			code = 0
			d.exit = &code
		}
		d.pump()
	}
	return *d.exit
}

// pump does whatever the current state allows: consume events and requests,
// then submit the next message if the seat is at a turn boundary.
func (d *Driver) pump() {
	d.drainEvents()
	d.drainControl()
	if d.exit == nil {
		d.maybeSubmit()
		d.armCommandTimer()
	}
}

func (d *Driver) setup() error {
	d.report(seat.Progress{State: "progress", Text: "holding owner.lock as " + d.Lock.Owner.Holder})
	facts, from, err := harness.FactsFor(d.S.Home, d.Ad, d.Cfg.Shape)
	if err != nil {
		return err
	}
	d.facts = facts
	d.logf("dispatch facts: form %s, sigils %q, %s", facts.Form, facts.Sigils, from)
	if d.Cfg.PasteSettle.Duration == 0 {
		d.Cfg.PasteSettle = d.Ad.PasteSettle()
	}
	sess, err := d.S.SessionFile().Read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		sess = state.Session{Harness: d.Cfg.Harness, ID: state.NewSessionID(), Generation: 1, Why: "first start"}
		if d.selfNaming() {
			sess.ID = "" // the harness names it; recorded from the first bound turn end
		}
	case err != nil:
		return fmt.Errorf("seat %q: %w (not overwritten; fix or remove it by hand)", d.S.Name, err)
	case sess.Harness != d.Cfg.Harness:
		return fmt.Errorf("seat %q: session.toml is a %s session but seat.toml says harness = %q (a harness change needs a new generation)", d.S.Name, sess.Harness, d.Cfg.Harness)
	}
	socket, err := state.SocketFor(d.Cfg)
	if err != nil {
		return err
	}
	// Keep the socket the seat was recorded on unless seat.toml names a path:
	// a driver started by cron (another TMUX_TMPDIR, no PANTTY_TMUX_SOCKET)
	// must find the same server, not start a second harness elsewhere.
	if sess.Socket == "" || filepath.IsAbs(d.Cfg.Tmux.Socket) {
		sess.Socket = socket
	}
	if !d.onAppServer() {
		// An app-server seat keeps what it recorded: its viewer pane's
		// session, or none before its thread's first turn (appserver.go).
		sess.TmuxName = d.S.Name
	}
	sess.Transport, sess.TransportWhy = d.Cfg.Transport, d.autoWhy // saved with the launch
	d.sess = sess
	d.tm = tmux.New(socket)
	// Watch first, then scan: a file created in between is seen by the scan.
	if d.w, err = fsnotify.NewWatcher(); err != nil {
		return err
	}
	for _, dir := range []string{d.S.MsgsDir(), d.S.EventsDir(), d.S.ControlDir()} {
		if err := d.w.Add(dir); err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
	}
	if n, err := d.S.AdoptInbox(); err != nil {
		return fmt.Errorf("seat %q: inbox: %w", d.S.Name, err)
	} else if n > 0 {
		d.logf("inbox: moved %d final statuses of an older layout into inbox/processed and inbox/failed", n)
	}
	d.prune()
	if c, err := d.S.ContextFile().Read(); err == nil && c.SessionID == d.sess.ID {
		d.ctxr = c // the floor measured earlier in this session still holds
	}
	if err := d.loadInbox(); err != nil {
		return err
	}
	d.begin(machine.Starting, "harness SessionStart")
	if d.Cfg.Shape == config.ShapeTurn {
		d.turnDone = make(chan turnDone, 1)
		if err := d.setupTurn(); err != nil {
			return err
		}
		d.report(seat.Progress{State: "ready", Holder: d.Lock.Owner.Holder, Session: d.sess.ID})
		d.Report = nil
	} else if d.onAppServer() {
		if err := d.launchAppServer(); err != nil {
			return err
		}
	} else if err := d.ensureHarness(); err != nil {
		return err
	}
	d.relayIgnored = map[int]bool{}
	d.loadMode()
	d.recoverFlight()
	// A driver killed between a message's final status and the cursor write left
	// cursor.toml behind; bring it up to date now, not at the next turn end.
	d.updateCursor()
	return nil
}

// pruneEvery is how often a long-running driver applies the retention rule.
const pruneEvery = 24 * time.Hour

// prune applies the retention rule (seat.Prune) behind the current cursor.
func (d *Driver) prune() {
	d.pruned = d.now()
	c, err := d.S.CursorFile().Read()
	if err != nil {
		return // no cursor yet (or unreadable): nothing is known to be behind it
	}
	if n := seat.Prune(d.S, d.now(), c); n > 0 {
		d.logf("retention: removed %d old files", n)
	}
}

func (d *Driver) teardown() {
	d.abandonCancel("the driver stopped")
	d.harnessW.stop()
	d.viewerW.stop()
	if d.as != nil {
		// Released: the server runs on, as a TUI in a pane does; the next
		// driver ends it (endPrevious) and resumes the thread.
		d.as.conn.Close()
	}
	if d.watch != nil {
		d.watch.Stop()
	}
	d.closeKeys()
	if d.w != nil {
		d.w.Close()
	}
}

// beat writes heartbeat.toml; only the loop calls it. It reports whether
// the heartbeat is durable: a failed one holds the queue like any record
// (the state root is full or read-only), and recover, which then sees it
// stale, finds the state root unwritable itself rather than calling the
// loop wedged.
func (d *Driver) beat() bool {
	hb := state.Heartbeat{At: d.now().UTC(), Phase: string(d.phase), Interval: d.Cfg.HeartbeatInterval,
		PID: os.Getpid(), Holder: d.Lock.Owner.Holder, Waiting: d.waiting}
	if o := d.outage; o != nil {
		hb.Fault, hb.FaultCause, hb.FaultSince = o.class, o.cause, o.since.UTC()
	}
	if err := d.S.HeartbeatFile().Write(hb); err != nil {
		d.stateFailed("heartbeat", err)
		return false
	}
	return true
}

// begin sets the phase a driver starts in; every later change is a named
// transition (to).
func (d *Driver) begin(p machine.Phase, waiting string) {
	d.phase, d.waiting = p, waiting
	d.beat()
}

// now is the driver's clock: the wall clock, or a transcript test's. The
// timers it arms and the pane watches still run in real time.
func (d *Driver) now() time.Time {
	if d.clock != nil {
		return d.clock()
	}
	return time.Now()
}

// to moves the driver by one event of machine.Rules and records the phase and
// what it waits for in the heartbeat. A pair the table does not name is
// logged (the seat tests fail on that line) and takes the event's usual
// target, so a gap in the table never stops a seat.
func (d *Driver) to(ev machine.Event, waiting string) {
	r, ok := machine.Lookup(d.phase, ev)
	if !ok {
		d.logf("%s %s on %s (taken to %s)", seat.UnnamedTransition, ev, d.phase, r.To)
	}
	if r.To == machine.Stay {
		return
	}
	if r.To == d.phase && waiting == d.waiting {
		return
	}
	d.phase, d.waiting = r.To, waiting
	d.beat()
}

func (d *Driver) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

func (d *Driver) onFSEvent(ev fsnotify.Event) {
	dir := filepath.Dir(ev.Name)
	if dir == d.S.MsgsDir() && ev.Op&(fsnotify.Create|fsnotify.Rename) != 0 {
		if id, ok := strings.CutSuffix(filepath.Base(ev.Name), ".json"); ok {
			d.addMessage(id)
		}
	}
	if d.drop != "" && dir == d.drop {
		d.drainDrop()
	}
	// Events and control are drained by pump after every wake-up.
}

func (d *Driver) rescan() {
	if err := d.loadInbox(); err != nil {
		d.logf("rescan inbox: %v", err)
	}
}

func (d *Driver) onReadyTimeout() {
	if d.ready || d.readying || d.pollReady() {
		return
	}
	if d.dialogBeforeStart() {
		return
	}
	err := fmt.Errorf("harness did not report SessionStart for session %s within %s%s",
		d.sess.ID, d.Cfg.ReadyTimeout.Duration, d.paneTail())
	d.logf("%v", err)
	if d.Report != nil {
		// The start that waits for us fails: leave no harness running without
		// a driver (its last lines are in the error and driver.log).
		d.report(seat.Progress{State: "error", Text: err.Error()})
		d.killHarness()
		code := 1
		d.exit = &code
	}
}

// paneTail returns the last lines of the pane for an error message.
func (d *Driver) paneTail() string {
	ctx, cancel := d.ctx()
	defer cancel()
	screen, err := d.pane().Screen(ctx)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; pane shows: " + state.Redact(state.JoinLines(lines))
}

// selfNaming reports whether the harness chooses its own session id.
func (d *Driver) selfNaming() bool {
	return d.Ad.Caps().NamesOwnSession
}

// sessionMatches binds a hook's session id to the seat: the recorded id, or —
// for a harness that names its own session and has not yet had a bound turn —
// whatever id it reports.
func (d *Driver) sessionMatches(id string) bool {
	return id != "" && (id == d.sess.ID || d.sess.ID == "" && d.selfNaming())
}

// learnSessionID records a self-naming harness's session id from the first turn
// end bound to a pantty submission; it never changes an id already recorded.
func (d *Driver) learnSessionID(id string) {
	if d.sess.ID != "" || id == "" || !d.selfNaming() {
		return
	}
	d.sess.ID = id
	d.sess.Why += "; session id recorded from the first turn end bound to a pantty submission"
	if err := d.saveSession(); err != nil {
		d.logf("session: %v", err)
	}
	d.logf("session id %s recorded from the harness's first bound turn end", id)
	d.applyLateReadings()
}
