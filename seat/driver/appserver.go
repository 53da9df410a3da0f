package driver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// The app-server path (seat.toml transport = "app-server"; docs/codex.md,
// "The app-server path (experimental, measured on 0.171.0)"): the driver
// starts the seat's own app server (Capabilities.AppServer) in place of a
// TUI in a pane, and that server is the seat's harness process: its exit is
// the harness's exit. The driver's connection starts the seat's thread (a
// first launch) or resumes the recorded one, so every notification of the
// thread reaches it; the thread's id is the seat's session id. Every call
// on the connection runs in a goroutine of its own and answers on the loop
// (rpcDone), as pane watches do (waits.go).

// asLink is the launch's running server, the driver's connection to it and
// the seat's thread on it.
type asLink struct {
	launch time.Time // Driver.launchAt of the launch that started it
	srv    *appserver.Server
	conn   *appserver.Conn
	thread string
	// turn is the turn running on the thread ("" when it is idle):
	// turnPending from the turn/start sent until its answer, then the
	// turn's id until its turn/completed. turn/start on a busy thread would
	// steer the running turn (measured), so nothing is submitted meanwhile.
	turn string
	// ended is the last turn whose turn/completed came: a turn/start
	// answered after its own turn's end leaves the thread idle.
	ended string
	// lastEnd is that turn's turn/completed, kept for a turn/start answer
	// that reaches the loop after it (the two arrive on different channels).
	lastEnd appserver.End
	// connGone: the connection's notifications ended (the loop no longer
	// reads them; the server's Done follows).
	connGone bool
	// hadTurn: the thread has had a turn (the viewer pane can resume it).
	hadTurn bool
	// readings: thread/tokenUsage/updated gave a context reading; the
	// PostModelRequest hook's of the same requests are not read after it.
	readings bool
	// idle: the server's last thread/status/changed for the thread said
	// idle (no turn runs); idleAt is when it came.
	idle   bool
	idleAt time.Time
	// compaction is the last compaction turn the command door started.
	compaction string
	// questions are the server's approval requests left to the person at
	// the viewer (onServerRequest), by appserver.RequestKey, until resolved.
	questions map[string]*json.RawMessage
	bin       string            // the codex binary (the viewer runs it too)
	env       map[string]string // the launch's environment (the viewer's too)
	// sentAt is when the board's last turn/start was sent, answered the
	// turn its answer named, started the last turn/started's turn and
	// startedAt when it came: driver.log says how long the turn took to
	// start (timeTurn), once.
	sentAt, startedAt time.Time
	answered, started string
}

// turnPending is asLink.turn while a turn/start has no answer yet.
const turnPending = "(turn/start sent)"

// asStarted is what the launch's goroutine hands the loop: the server and
// the thread on it, or why not.
type asStarted struct {
	srv     *appserver.Server
	conn    *appserver.Conn
	thread  appserver.Thread
	resumed bool
	bin     string            // the codex binary, resolved on the harness's PATH
	env     map[string]string // the launch's environment, for launch.toml
	err     error
}

// release ends a started server nobody will use (its launch is gone): the
// connection closed, the server stopped off the loop (Stop waits its grace).
func (r asStarted) release() {
	if r.conn != nil {
		r.conn.Close()
	}
	if r.srv != nil {
		go r.srv.Stop()
	}
}

// asStartLimit bounds a launch: the home's preparation (Codex's hook trust
// runs its own app server), the server's start and the thread's start or
// resume.
const asStartLimit = 60 * time.Second

// asCallLimit bounds one call on the connection (turn/start, turn/interrupt;
// answered in 3-27 ms when measured).
const asCallLimit = 30 * time.Second

// onLoop runs fn in a goroutine and then is on the loop with its result:
// the way the driver calls the app server without blocking on it. A launch
// newer than the call's makes the answer stale: it is dropped.
func (d *Driver) onLoop(fn func() func()) {
	if d.rpcDone == nil {
		d.rpcDone = make(chan asAnswer, 4)
	}
	at, done := d.launchAt, d.rpcDone
	go func() { done <- asAnswer{launch: at, then: fn()} }()
}

// onLoopAfter runs then on the loop once wait has passed (a timer, no
// goroutine that sleeps), unless a newer launch made it stale: the bound of
// an app-server call's effect, as a pane watch's limit bounds the tmux path.
func (d *Driver) onLoopAfter(wait time.Duration, then func()) {
	if d.rpcDone == nil {
		d.rpcDone = make(chan asAnswer, 4)
	}
	at, done := d.launchAt, d.rpcDone
	time.AfterFunc(wait, func() { done <- asAnswer{launch: at, then: then} })
}

// asAnswer is one call's continuation, for the launch it was made in.
type asAnswer struct {
	launch time.Time
	then   func()
	drop   func() // releases what a stale answer holds; nil: nothing
}

// onAnswer runs a call's continuation on the loop unless it is stale; a
// stale one's drop runs instead.
func (d *Driver) onAnswer(a asAnswer) {
	switch {
	case a.launch.Equal(d.launchAt) && a.then != nil:
		a.then()
	case !a.launch.Equal(d.launchAt) && a.drop != nil:
		a.drop()
	}
}

// onLoopOrDrop is onLoop for a call whose result holds something that must
// not outlive a stale answer: a server started for a launch that is gone
// would run the seat's thread beside the next one's.
func (d *Driver) onLoopOrDrop(fn func() (then, drop func())) {
	if d.rpcDone == nil {
		d.rpcDone = make(chan asAnswer, 4)
	}
	at, done := d.launchAt, d.rpcDone
	go func() {
		then, drop := fn()
		done <- asAnswer{launch: at, then: then, drop: drop}
	}()
}

// launchAppServer starts the seat's app server and its thread: the launch
// is checked as a pane launch is (the environment, pass_env, the binary on
// the harness's PATH), every process of an earlier launch is ended first
// (one harness per session), and the start runs off the loop; the loop
// hears it in onServerStarted.
func (d *Driver) launchAppServer() error {
	start := d.Ad.Caps().AppServer
	if start == nil {
		return fmt.Errorf("%w: seat %s: harness %s has no app server (transport = %q needs codex)", state.ErrBadInput, d.S.Name, d.Ad.Name(), d.Cfg.Transport)
	}
	auth, env, err := d.launchEnv()
	if err != nil {
		return err
	}
	bin, err := d.resolveBinary(cmp.Or(d.Cfg.Command, d.Ad.Caps().Binary), env["PATH"])
	if err != nil {
		return err
	}
	resume := false
	if d.sess.ID != "" {
		if resume, err = d.Ad.SessionExists(d.S, d.Cfg, d.sess.ID); err != nil {
			return fmt.Errorf("%w: session record: %v", state.ErrUnobservable, err)
		}
	}
	if err := d.endPrevious(); err != nil {
		return err
	}
	cfg := d.Cfg
	cfg.Command = bin
	l := harness.Launch{Seat: d.S, Config: cfg, SessionID: d.sess.ID, Resume: resume,
		Settings: d.S.SettingsPath(), Pantty: d.Pantty, Authority: auth}
	logPath := d.serverLog()
	thread, workdir := d.sess.ID, d.Cfg.Workdir
	d.ready, d.readying, d.adopted = false, false, false
	d.as = nil
	d.launchAt = d.now()
	d.report(seat.Progress{State: "progress", Text: "starting the seat's app server at " + filepath.Base(logPath)})
	d.onLoopOrDrop(func() (func(), func()) {
		r := startAppServer(start, l, logPath, thread, resume, workdir)
		r.env, r.bin = env, bin
		return func() { d.onServerStarted(r) }, r.release
	})
	d.to(machine.Launched, "the app server and the seat's thread")
	d.readyT.set(d.Cfg.ReadyTimeout.Duration)
	return nil
}

// startAppServer is the launch's goroutine: the server (its stderr appended
// to logPath), the driver's connection, then thread/resume of thread when
// resume says the harness has its record, else thread/start in workdir.
func startAppServer(start func(context.Context, harness.Launch, io.Writer) (*appserver.Server, error),
	l harness.Launch, logPath, thread string, resume bool, workdir string) asStarted {
	ctx, cancel := context.WithTimeout(context.Background(), asStartLimit)
	defer cancel()
	if err := os.MkdirAll(filepath.Dir(logPath), fsatomic.DirMode); err != nil {
		return asStarted{err: err}
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return asStarted{err: err}
	}
	srv, err := start(ctx, l, logf)
	logf.Close() // the server holds its own copy
	if err != nil {
		return asStarted{err: err}
	}
	conn, err := srv.Dial(ctx, "pantty", "driver")
	if err != nil {
		srv.Stop()
		return asStarted{err: err}
	}
	r := asStarted{srv: srv, conn: conn, resumed: resume}
	if resume {
		r.thread, err = conn.ResumeThread(ctx, thread)
	} else {
		r.thread, err = conn.StartThread(ctx, workdir)
	}
	if err != nil {
		conn.Close()
		srv.Stop()
		return asStarted{err: err}
	}
	return r
}

// onServerStarted takes the launch's server: the thread's id is the seat's
// session id from now on, the server's pid its harness process, and the seat
// is ready (there is no input box to look for; SessionStart comes with the
// thread's first turn, measured). A start that failed is a harness exit
// before it came up.
func (d *Driver) onServerStarted(r asStarted) {
	if r.err != nil {
		d.logf("app server: %v", r.err)
		d.harnessGone("the app server did not start: "+r.err.Error(), nil)
		return
	}
	d.as = &asLink{launch: d.launchAt, srv: r.srv, conn: r.conn, thread: r.thread.ID, hadTurn: r.resumed, bin: r.bin, env: r.env}
	if d.sess.ID != r.thread.ID {
		if d.sess.ID != "" {
			d.logf("session %s has no record yet (no turn ran on it): a new thread %s", d.sess.ID, r.thread.ID)
		}
		d.sess.ID = r.thread.ID
		d.sess.Why += "; the app server's thread " + r.thread.ID
	}
	// launch.toml says what runs (readers: the session's binding, the
	// ladder's rung) until the viewer pane's command takes its place
	// (ensureViewer): only that is ever exec'd from it.
	if d.sess.TmuxName == "" {
		if err := d.S.LaunchFile().Write(state.LaunchFile{Argv: r.srv.Argv(), Dir: d.Cfg.Workdir, Env: r.env}); err != nil {
			d.logf("launch.toml: %v", err)
		}
	}
	d.sess.PanePID = r.srv.Pid()
	d.sess.Launches++
	d.sess.LaunchedAt = d.launchAt.UTC()
	d.sess.Resumed = r.resumed
	if !r.resumed {
		d.floorPending = "first request of a fresh session"
		d.ctxr = state.Context{}
	}
	if err := d.saveSession(); err != nil {
		d.logf("session: %v", err)
	}
	verb := "started"
	if r.resumed {
		verb = "resumed"
	}
	d.logf("%s thread %s on the seat's app server (pid %d, %s)", verb, r.thread.ID, r.srv.Pid(), r.srv.Socket())
	d.applyLateReadings()
	d.markReady("the app server listens and thread "+r.thread.ID+" is "+verb, false)
	d.ensureViewer("thread " + verb)
}

// serverLog is where the seat's app server writes its stderr (appended
// across launches).
func (d *Driver) serverLog() string { return filepath.Join(d.S.HarnessDir(), "app-server.log") }

// serverWordsTail is how much of the server's log its last words come from.
const serverWordsTail = 16 << 10

// serverWords are the app server's last words for harness-exit.toml: the
// end of its log, as a pane's last screen is for a TUI.
func (d *Driver) serverWords() []string {
	f, err := os.Open(d.serverLog())
	if err != nil {
		return nil
	}
	defer f.Close()
	cut := false
	if fi, err := f.Stat(); err == nil && fi.Size() > serverWordsTail {
		_, err = f.Seek(fi.Size()-serverWordsTail, io.SeekStart)
		cut = err == nil
	}
	b, _ := io.ReadAll(f)
	all := strings.Split(string(b), "\n")
	if cut {
		all = all[1:] // the part of a line the seek cut into
	}
	var lines []string
	for _, l := range all {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, state.Redact(l))
		}
	}
	return keepWords(lines)
}

// serverDone is the running server's end (nil when none runs: a select
// waits forever on it).
func (d *Driver) serverDone() <-chan struct{} {
	if d.as == nil {
		return nil
	}
	return d.as.srv.Done()
}

// notes is the connection's notifications (nil when there is none).
func (d *Driver) notes() <-chan appserver.Message {
	if d.as == nil || d.as.connGone {
		return nil
	}
	return d.as.conn.Notifications()
}

// onServerExit is the app server's death: the harness exited. The link is
// dropped, and harnessGone settles the message in flight by its evidence
// and relaunches on the same thread (thread/resume).
func (d *Driver) onServerExit(why string) {
	as := d.as
	if as == nil {
		return
	}
	d.as = nil
	as.conn.Close()
	err := as.srv.Err()
	d.logf("app server (pid %d) exited: %v (%s)", as.srv.Pid(), err, why)
	d.harnessGone(fmt.Sprintf("%s: the app server exited (%v)", why, err), nil)
}

// onConnEnded is the driver's connection ending. With the server dead its
// Done follows (onServerExit); a server that lives on without the driver's
// connection would run the thread unseen, so it is ended (off the loop:
// Stop waits for its exit), and its Done is the harness's exit as ever.
func (d *Driver) onConnEnded() {
	as := d.as
	if as == nil || as.connGone {
		return
	}
	as.connGone = true
	select {
	case <-as.srv.Done():
		return
	default:
	}
	d.logf("the connection to the app server (pid %d) ended (%v) while it runs: ending it", as.srv.Pid(), as.conn.Err())
	go as.srv.Stop()
}

// checkServer is checkHarness on this path: the server's Done is the
// event; a check finds only what it missed.
func (d *Driver) checkServer(why string) {
	if d.as == nil {
		return // starting, or a relaunch is scheduled
	}
	select {
	case <-d.as.srv.Done():
		d.onServerExit(why)
	default:
	}
}

// stopServer ends the running server, if any, and waits for it
// (appserver.Server.Stop: SIGTERM, SIGKILL after its grace); a stop or a
// give-up ends the seat's launch, and this is the launch's harness.
func (d *Driver) stopServer() {
	if as := d.as; as != nil {
		d.as = nil
		as.conn.Close()
		as.srv.Stop()
	}
}

// The app-server seat's pane is a viewer (docs/codex.md, "What remains for
// issue #33"): `codex resume <thread> --remote unix://<socket>`, the TUI
// attached to the seat's own server on the seat's thread, in the seat's tmux
// session, so a person can watch and `seat attach` (relay holds the board
// meanwhile, as on the tmux path). It is no harness: its death is not a
// harness exit, the driver opens it again; nothing is read from it and no
// key goes to it. The TUI cannot resume a thread before its first turn
// (measured: it exits, -32600), so it opens after that turn.

// viewerQuick is how long a viewer must have run for its death to be
// answered with a new one at once; one that died sooner (a failed attach)
// is opened again only that long after its start, so a viewer that cannot
// start costs one try per viewerQuick, never a loop.
const viewerQuick = 10 * time.Second

// viewerArgv is the pane's command: the TUI resuming the seat's thread on
// the seat's server.
func (as *asLink) viewerArgv() []string {
	return []string{as.bin, "resume", as.thread, "--remote", "unix://" + as.srv.Socket()}
}

// ensureViewer opens the seat's viewer pane when the server runs, its
// thread has had a turn and no live viewer is there: respawned in the
// seat's tmux session if it has one, in a new session else. launch.toml is
// the viewer's (the pane's process, `pantty __exec`, runs it with the
// harness's environment); session.toml keeps the server's pid as the
// harness process and the pane's id.
func (d *Driver) ensureViewer(why string) {
	as := d.as
	if as == nil || as.connGone || !as.hadTurn || !d.ready || d.exit != nil {
		return
	}
	pane, alive := d.viewerPane()
	if alive {
		return
	}
	if since := d.now().Sub(d.viewerAt); !d.viewerAt.IsZero() && since < viewerQuick {
		d.viewerT.set(viewerQuick - since)
		return
	}
	if err := d.S.LaunchFile().Write(state.LaunchFile{Argv: as.viewerArgv(), Dir: d.Cfg.Workdir, Env: as.env}); err != nil {
		d.logf("viewer pane: launch.toml: %v (not opened)", err)
		return
	}
	argv := proc.PaneArgv(d.Pantty, d.S)
	ctx, cancel := d.ctx()
	defer cancel()
	var p tmux.Pane
	var err error
	if pane != nil {
		p, err = d.tm.RespawnPane(ctx, pane.ID, argv, d.Cfg.Workdir)
	} else {
		p, err = d.tm.NewSession(ctx, tmux.NewSessionOpts{Name: d.S.Name, Dir: d.Cfg.Workdir, Argv: argv, RemainOnExit: true})
	}
	d.viewerAt = d.now()
	if err != nil {
		d.logf("viewer pane (%s): %v", why, err)
		return
	}
	d.sess.TmuxName, d.sess.PaneID = d.S.Name, p.ID
	if err := d.saveSession(); err != nil {
		d.logf("session: %v", err)
	}
	d.setTmuxHooks()
	d.viewerW.stop()
	d.viewerW, _ = watchProcess(p.PID)
	d.logf("viewer pane %s (pid %d): codex resume %s --remote on the seat's app server (%s)", p.ID, p.PID, as.thread, why)
}

// viewerPane finds the seat's pane in its tmux session: the recorded one
// (alive says whether it runs), or any pane of the session to respawn.
func (d *Driver) viewerPane() (pane *tmux.Pane, alive bool) {
	if d.sess.TmuxName == "" {
		return nil, false
	}
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		d.logf("viewer pane: tmux: %v", err)
		return nil, true // cannot tell: leave it; the next check looks again
	}
	for i := range panes {
		p := panes[i]
		if p.Session != d.sess.TmuxName {
			continue
		}
		if p.ID == d.sess.PaneID && !p.Dead {
			return &p, true
		}
		pane = &p
	}
	return pane, false
}

// killViewer ends the seat's tmux session (a stop, a give-up): the viewer
// goes with the server.
func (d *Driver) killViewer() {
	d.viewerW.stop()
	d.viewerW = nil
	if d.sess.TmuxName == "" {
		return
	}
	ctx, cancel := d.ctx()
	defer cancel()
	if err := d.tm.KillSession(ctx, d.sess.TmuxName); err != nil && !errors.Is(err, tmux.ErrNoServer) && !errors.Is(err, tmux.ErrNoTarget) {
		d.logf("kill the viewer's session: %v", fmt.Sprint(err))
	}
}
