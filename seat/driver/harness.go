package driver

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// ensureHarness finds the seat's pane and adopts it when its pid still matches
// session.toml (no second harness on one session), respawns it when it is dead,
// and creates the tmux session (and server) when they are gone.
func (d *Driver) ensureHarness() error {
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		return fmt.Errorf("%w: tmux server %s: %v", state.ErrUnobservable, d.sess.Socket, err)
	}
	var ours *tmux.Pane
	for i := range panes {
		p := panes[i]
		if p.Session != d.sess.TmuxName {
			continue
		}
		if p.ID == d.sess.PaneID && p.PID == d.sess.PanePID && !p.Dead {
			d.adopted, d.ready = true, true
			d.stepDone = true // an adopted session may have run its step: the next one starts fresh
			d.logf("adopted live pane %s (pid %d) on session %s", p.ID, p.PID, d.sess.ID)
			d.endBeside(p.PID)
			d.report(seat.Progress{State: "progress", Text: fmt.Sprintf("adopted the live harness in pane %s", p.ID)})
			if err := d.saveSession(); err != nil {
				return err
			}
			d.setTmuxHooks()
			d.watchSession()
			d.watchHarness()
			d.to(machine.Ready, "")
			// An adopted harness sends no new SessionStart, so the verdict the
			// spawning start waits for is given here: the harness is up and ours
			// (or up behind a dialog: held, heldAtStart).
			if !d.heldAtStart() {
				d.report(seat.Progress{State: "ready", Holder: d.Lock.Owner.Holder, Session: d.sess.ID, Adopted: true})
			}
			d.Report = nil
			return nil
		}
		if ours == nil {
			ours = &p
		}
	}
	return d.launch(ours)
}

// launchEnv is what every launch (a pane's, an app server's) needs first:
// the authority this launch gives the model (authority.toml and the
// per-launch settings written), and the harness's environment with its drop
// directory, checked to be one the harness can work in.
func (d *Driver) launchEnv() (state.Authority, map[string]string, error) {
	auth, err := d.writeSettings()
	if err != nil {
		return auth, nil, err
	}
	env, err := launch.HarnessEnv(os.Environ(), d.S, d.Cfg, d.Ad.Env(d.S, d.Cfg))
	if err != nil {
		return auth, nil, err
	}
	env = auth.WithDrop(env)
	if err := d.canWork(env); err != nil {
		return auth, nil, err
	}
	return auth, env, nil
}

// launch starts the harness in pane (respawning it) or in a new tmux session,
// resuming the seat's session when the harness has a record of it.
func (d *Driver) launch(pane *tmux.Pane) error {
	resume, err := d.Ad.SessionExists(d.S, d.Cfg, d.sess.ID)
	if err != nil {
		return fmt.Errorf("%w: session record: %v", state.ErrUnobservable, err)
	}
	auth, env, err := d.launchEnv()
	if err != nil {
		return err
	}
	// A missing binary is named before the adapter prepares anything: Codex's
	// Argv runs codex itself to trust its hooks, and failed there in its own
	// words ("hook trust: start X app-server: exec: …").
	if cmd := cmp.Or(d.Cfg.Command, d.Ad.Caps().Binary); cmd != "" {
		if _, err := d.resolveBinary(cmd, env["PATH"]); err != nil {
			return err
		}
	}
	argv, err := d.Ad.Argv(harness.Launch{Seat: d.S, Config: d.Cfg, SessionID: d.sess.ID, Resume: resume,
		Settings: d.S.SettingsPath(), Pantty: d.Pantty, Authority: auth})
	if err != nil {
		return err
	}
	// Resolve the binary now, on the PATH the harness gets, so a missing one is
	// refused with that PATH named before tmux starts anything.
	if argv[0], err = d.resolveBinary(argv[0], env["PATH"]); err != nil {
		return err
	}
	lf := state.LaunchFile{Argv: argv, Dir: d.Cfg.Workdir, Env: env}
	if auth.On() && auth.Mechanism == jail.Mechanism {
		if lf, err = d.jailed(lf, auth); err != nil {
			return err
		}
		d.logf("authority: the harness runs in %s (hook door %s)", jail.Mechanism, lf.Door)
	}
	if err := d.S.LaunchFile().Write(lf); err != nil {
		return err
	}
	if d.Cfg.Shape == config.ShapeStep && !resume {
		// A step seat's first session also starts from the handoff, if there is one.
		if text, err := d.S.Handoff().Current(); err == nil {
			if in, err := d.S.InjectFile().Read(); err != nil || in.SessionID != d.sess.ID {
				d.S.InjectFile().Write(state.Inject{SessionID: d.sess.ID, Hash: handoff.StableHash(text), Why: "first session of this step seat", At: d.now().UTC()})
			}
		}
	}
	if err := d.endPrevious(); err != nil {
		return err
	}
	paneArgv := proc.PaneArgv(d.Pantty, d.S)
	d.ready, d.readying, d.adopted = false, false, false
	d.launchAt = d.now()
	ctx, cancel := d.ctx()
	defer cancel()
	var p tmux.Pane
	if pane != nil {
		d.report(seat.Progress{State: "progress", Text: "respawning the harness in pane " + pane.ID})
		p, err = d.tm.RespawnPane(ctx, pane.ID, paneArgv, d.Cfg.Workdir)
	} else {
		d.report(seat.Progress{State: "progress", Text: "starting tmux session " + d.sess.TmuxName + " on " + d.sess.Socket})
		p, err = d.tm.NewSession(ctx, tmux.NewSessionOpts{Name: d.sess.TmuxName, Dir: d.Cfg.Workdir,
			Argv: paneArgv, RemainOnExit: true})
	}
	if err != nil {
		if errors.Is(err, tmux.ErrTimeout) {
			return fmt.Errorf("%w: launch: %v", state.ErrUnobservable, err)
		}
		return fmt.Errorf("launch harness: %w", err)
	}
	d.sess.PaneID, d.sess.PanePID = p.ID, p.PID
	d.sess.Launches++
	d.sess.LaunchedAt = d.launchAt.UTC()
	d.sess.Resumed = resume
	d.stepDone = d.stepDone || resume
	if !resume {
		d.floorPending = "first request of a fresh session"
		d.ctxr = state.Context{}
	}
	if err := d.saveSession(); err != nil {
		return err
	}
	d.setTmuxHooks()
	d.watchSession()
	d.watchHarness()
	verb := "started"
	if resume {
		verb = "resumed"
	}
	d.logf("%s harness in pane %s (pid %d), session %s", verb, p.ID, p.PID, d.sess.ID)
	d.report(seat.Progress{State: "progress", Text: fmt.Sprintf("%s session %s; waiting for the harness's SessionStart", verb, d.sess.ID)})
	d.to(machine.Launched, "harness SessionStart")
	d.readyT.set(d.Cfg.ReadyTimeout.Duration)
	d.armReadyPoll()
	return nil
}

// canWork refuses a launch that cannot work, as `seat start` and `recover`
// do before they spawn a driver (harness.CanWork), here with the environment
// the harness gets: a pass_env variable it lacks, or a home `pantty seat
// prepare-home` would change. It covers a seat.toml or home changed since
// the check; the refusal names the command that fixes it, and a relaunch
// refused so counts towards the give-up (no loop).
func (d *Driver) canWork(env map[string]string) error {
	var missing []string
	for _, k := range d.Cfg.PassEnv {
		if _, ok := env[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return launch.MissingPassEnvError(d.S, missing, "pantty seat start "+d.S.Name)
	}
	if err := harness.CheckHome(d.Ad, d.S, d.Cfg, env); err != nil {
		if errors.Is(err, harness.ErrHomeUnprepared) {
			return err
		}
		d.logf("launching although the harness's home could not be checked: %v", err)
	}
	return nil
}

// resolveBinary finds the harness command on the harness's PATH and keeps the
// answer in launch-env.toml, where `recover check` and a person can see which
// binary the seat runs.
func (d *Driver) resolveBinary(command, path string) (string, error) {
	bin, err := launch.ResolveBinary(command, path)
	if err != nil {
		return "", err
	}
	if rec, rerr := d.S.LaunchEnvFile().Read(); rerr == nil && (rec.Binary != bin || rec.Command != command) {
		if rec.Binary != "" && rec.Binary != bin {
			// Not refused: an update or a PATH edit moves it too. Said, so a
			// binary planted earlier on the PATH is visible in driver.log.
			d.logf("harness binary changed since the last launch: %s -> %s", rec.Binary, bin)
		}
		rec.Binary, rec.Command = bin, command
		if werr := d.S.LaunchEnvFile().Write(rec); werr != nil {
			d.logf("launch-env.toml: %v", werr)
		}
	}
	return bin, nil
}

func (d *Driver) saveSession() error { return d.S.SessionFile().Write(d.sess) }

// setTmuxHooks asks tmux to tell the driver (through `pantty hook`) when the
// pane dies and when a client attaches or detaches (relay mode). Each is also
// covered by a check on the heartbeat tick, because a hook can be lost.
func (d *Driver) setTmuxHooks() {
	ctx, cancel := d.ctx()
	defer cancel()
	for _, h := range []string{"pane-died", "client-attached", "client-detached"} {
		cmd := "run-shell -b " + tmuxQuote(launch.HookCommand(d.Pantty, d.S, "--tmux", h))
		if err := d.tm.SetHook(ctx, d.sess.TmuxName, h, cmd); err != nil {
			d.logf("set %s hook: %v (the heartbeat check still covers it)", h, err)
		}
	}
}

// watchHarness follows the harness process itself (pidfd), so its exit is seen
// at once even when tmux loses the pane's SIGCHLD.
func (d *Driver) watchHarness() {
	d.harnessW.stop()
	d.harnessW = nil
	if w, ok := watchProcess(d.sess.PanePID); ok {
		d.harnessW = w
	}
}

// reapAndCheck nudges the tmux server to collect an exited pane (tmux.Reap: an
// extra SIGCHLD, harmless) and then checks the pane.
func (d *Driver) reapAndCheck(why string) {
	ctx, cancel := d.ctx()
	if err := d.tm.Reap(ctx); err != nil {
		d.logf("reap: %v", err)
	}
	cancel()
	d.checkHarness(why)
}

// watchSession starts tmux's control-mode client, whose end tells the loop —
// without polling — that the session or the whole server went away.
func (d *Driver) watchSession() {
	if d.watch != nil {
		d.watch.Stop()
	}
	ctx, cancel := d.ctx()
	defer cancel()
	d.paneKeys()
	w, err := d.tm.WatchSession(ctx, d.sess.TmuxName)
	if err != nil {
		d.logf("watch session: %v (the heartbeat check still notices a vanished server)", err)
		d.watch, d.gone = nil, nil
		return
	}
	d.watch, d.gone = w, w.Done()
}

// controlEnv turns the control-mode client for pane commands off when set
// to "off" (then every pane command is a tmux process of its own, as
// before 2026-12-05).
const controlEnv = "PANTTY_TMUX_CONTROL"

// paneKeys gives the launch one tmux control-mode client for its pane
// commands (tmux.Conn: no process per capture, key or paste; it reconnects
// once and then falls back to a process per command by itself). A relaunch,
// possibly on a new server, gets a new one; the driver's end closes it.
func (d *Driver) paneKeys() {
	d.closeKeys()
	c, ok := d.tm.(*tmux.Client)
	if !ok || os.Getenv(controlEnv) == "off" {
		return // a scripted pane (transcripts), or switched off
	}
	d.keys = tmux.NewConn(c, d.sess.TmuxName, func(f string, a ...any) { d.logf(f, a...) })
}

// closeKeys ends the launch's control-mode client, if any.
func (d *Driver) closeKeys() {
	if d.keys != nil {
		d.keys.Close()
		d.keys = nil
	}
}

// checkHarness verifies the pane is alive and relaunches it when it is not.
// It runs on tmux's signals and, as a safety net, once per heartbeat tick.
func (d *Driver) checkHarness(why string) {
	if d.onAppServer() {
		d.checkServer(why)
		d.ensureViewer(why)
		return
	}
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		d.logf("%s: tmux unobservable: %v", why, err)
		return
	}
	for _, p := range panes {
		if p.ID == d.sess.PaneID && p.Session == d.sess.TmuxName {
			if !p.Dead && p.PID == d.sess.PanePID {
				if d.gone == nil {
					d.watchSession()
				}
				return
			}
			d.harnessGone(fmt.Sprintf("%s: pane %s dead (status %d)", why, p.ID, p.DeadStatus), &p)
			return
		}
	}
	d.harnessGone(why+": the seat's tmux session is gone", nil)
}

// harnessGone settles the in-flight message by evidence and relaunches the
// harness on the same session.
func (d *Driver) harnessGone(why string, pane *tmux.Pane) {
	if d.relaunchT.C() != nil {
		return // a relaunch is already scheduled (backing off)
	}
	if d.exit != nil {
		return // the loop is ending (gave up, stopping): nothing to relaunch
	}
	d.logf("harness gone: %s", why)
	plan := machine.AfterExit(d.exits, d.ready, d.now().Sub(d.launchAt), state.MaxLaunchFailures)
	d.exits = plan.Exits
	d.noteExit(why, pane, d.ready, plan.GiveUp)
	d.ready, d.readying = false, false
	d.abandonCancel("the harness went away (" + why + ")")
	d.foreignTurn = ""
	d.to(machine.HarnessGone, why)
	d.settleLostFlight()
	leftover := d.termLaunch()
	switch {
	case plan.GiveUp:
		d.endLaunch("giving up")
		d.giveUp()
	case plan.After > 0:
		d.logf("harness exited %d times within %s of launch: relaunching in %s", d.exits.Quick, machine.QuickExit, plan.After)
		d.to(machine.HarnessGone, fmt.Sprintf("harness exited %d times within %s of launch; next launch in %s; it said: %s", d.exits.Quick, machine.QuickExit, plan.After, d.lastExit.LastLine()))
		d.relaunchT.set(plan.After)
	case leftover > 0:
		// The launch's processes got SIGTERM just now: give them the grace
		// before the relaunch (endPrevious kills what is left then).
		d.relaunchT.set(proc.LaunchGrace)
	default:
		d.relaunchNow()
	}
}

// termLaunch sends SIGTERM to every process of the seat's launch that still
// runs although its harness is gone (after a tmux kill-server the pane process
// and a harness that ignores SIGHUP live on, reparented to pid 1), and returns
// how many there were.
func (d *Driver) termLaunch() int {
	procs := proc.LaunchProcs(d.S)
	if len(procs) == 0 {
		return 0
	}
	proc.SignalProcs(procs, syscall.SIGTERM)
	d.termAt = d.now()
	d.logf("the harness is gone but %d processes of its launch run on: SIGTERM to pids %s (SIGKILL after %s)", len(procs), proc.Pids(procs), proc.LaunchGrace)
	return len(procs)
}

// endPrevious ends every process of the seat's earlier launches before a new
// launch starts: one harness per session, always. What got SIGTERM from
// termLaunch gets the rest of proc.LaunchGrace, anything else SIGTERM and the
// whole grace, then SIGKILL. A process that survives that is named and the
// launch is refused: a second harness on the session would be worse than none.
func (d *Driver) endPrevious() error {
	grace := proc.LaunchGrace
	if !d.termAt.IsZero() {
		grace = max(0, proc.LaunchGrace-d.now().Sub(d.termAt))
		d.termAt = time.Time{}
	}
	start := time.Now()
	ended, err := proc.EndLaunch(d.S, grace)
	if len(ended) > 0 {
		d.logf("ended %d processes of the seat's previous launch before launching, in %s: %s",
			len(ended), time.Since(start).Round(time.Millisecond), proc.Pids(ended))
	}
	if err != nil {
		return fmt.Errorf("not launching a second harness on session %s: %w", d.sess.ID, err)
	}
	return nil
}

// endBeside ends what runs of the seat's earlier launches beside the adopted
// pane (a pane process of an older launch whose server died while no driver
// was there to end it, a harness reparented to pid 1): one harness per session.
func (d *Driver) endBeside(panePID int) {
	ended, err := proc.EndOutside(d.S, panePID, proc.LaunchGrace)
	if len(ended) > 0 {
		d.logf("ended %d processes of the seat's earlier launches beside the adopted pane: %s", len(ended), proc.Pids(ended))
	}
	if err != nil {
		d.logf("adopt: %v", err)
	}
}

// endLaunch ends the seat's launch for good (a stop, a give-up) and logs what
// outlived it: nothing should.
func (d *Driver) endLaunch(why string) {
	start := time.Now()
	ended, err := proc.EndLaunch(d.S, proc.LaunchGrace)
	if len(ended) > 0 {
		d.logf("%s: ended %d processes of the seat's launch in %s: %s", why, len(ended), time.Since(start).Round(time.Millisecond), proc.Pids(ended))
	}
	if err != nil {
		d.logf("%s: %v", why, err)
	}
}

// restoreSession answers a harness that left the seat's session without
// pantty asking (Gemini CLI's command list can turn a pasted /compress into
// /clear; a person can type /clear): every later message would reach the
// model in a session the seat does not trust and be failed undelivered.
// pantty restores the recorded session rather than adopting the new one:
// the event naming it is a hook event, which a model with a shell can forge,
// and a forged one here costs a relaunch on the same session, nothing else.
// The harness is ended and relaunched resuming the recorded session; the
// message in flight, if any, is settled by its evidence as after any exit.
// During relay the person at the pane keeps it until relay ends.
func (d *Driver) restoreSession(why string) {
	if d.mode.Mode == state.ModeRelay {
		d.strayed = why
		d.logf("%s during relay: the seat's session %s is resumed when relay ends", why, d.sess.ID)
		return
	}
	d.strayed = ""
	d.logf("%s: restoring the seat's session %s (the harness is relaunched resuming it)", why, d.sess.ID)
	d.killHarness()
	d.harnessGone("restoring the seat's session "+d.sess.ID+" ("+why+")", nil)
}

// relaunchNow finds the seat's pane (if any is left) and launches the harness.
func (d *Driver) relaunchNow() {
	d.relaunchT.stop()
	var err error
	if d.onAppServer() {
		if d.as != nil {
			return // already back
		}
		err = d.launchAppServer()
	} else {
		err = d.relaunchPane()
	}
	if err != nil {
		d.logf("relaunch failed: %v", err)
		d.to(machine.LaunchFailed, "relaunch failed: "+err.Error())
		// A launch that cannot even be made (no binary, an unreadable env_file)
		// counts as a launch that ended before the harness came up.
		plan := machine.AfterLaunchFailure(d.exits, state.MaxLaunchFailures)
		d.exits = plan.Exits
		d.lastExit = state.HarnessExit{At: d.now().UTC(), Why: "relaunch failed", BeforeReady: true,
			InARow: d.exits.BeforeReady, Lines: []string{err.Error()}, GaveUp: plan.GiveUp}
		if err := d.S.HarnessExitFile().Write(d.lastExit); err != nil {
			d.logf("harness-exit.toml: %v", err)
		}
		if plan.GiveUp {
			d.giveUp()
		} else {
			d.relaunchT.set(plan.After)
		}
	}
}

// relaunchPane launches the harness in the seat's pane again: respawned
// when the pane is there, in a new session else.
func (d *Driver) relaunchPane() error {
	if d.paneAlive() {
		return nil // someone (a rung switch, a check) already brought it back
	}
	// Look at the pane as it is now: respawn it if it is there, else make a
	// new session.
	var pane *tmux.Pane
	ctx, cancel := d.ctx()
	panes, _ := d.tm.ListPanes(ctx)
	cancel()
	for i := range panes {
		if panes[i].Session == d.sess.TmuxName {
			pane = &panes[i]
			break
		}
	}
	return d.launch(pane)
}

// killHarness ends the seat's tmux session and every process of its launch
// (seat.EndLaunch), so no orphan outlives a stop.
func (d *Driver) killHarness() {
	pid := d.sess.PanePID
	if d.onAppServer() {
		d.stopServer()
		d.killViewer()
		d.endLaunch(fmt.Sprintf("harness stopped (app server pid %d)", pid))
		return
	}
	ctx, cancel := d.ctx()
	defer cancel()
	if err := d.tm.KillSession(ctx, d.sess.TmuxName); err != nil && !errors.Is(err, tmux.ErrNoServer) && !errors.Is(err, tmux.ErrNoTarget) {
		d.logf("kill session: %v", err)
	}
	d.endLaunch(fmt.Sprintf("harness stopped (pane pid %d)", pid))
}

// tmuxQuote quotes a string as one tmux command argument (double quotes, with the
// characters tmux expands inside them escaped).
func tmuxQuote(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\\', '$':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}

// paneAlive reports whether the seat's recorded pane runs the recorded harness.
func (d *Driver) paneAlive() bool {
	if d.sess.PaneID == "" {
		return false
	}
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil {
		return false
	}
	for _, p := range panes {
		if p.ID == d.sess.PaneID && p.PID == d.sess.PanePID && !p.Dead && p.Session == d.sess.TmuxName {
			return true
		}
	}
	return false
}

// jailed wraps the launch in pantty's jail (seat/jail) for a harness with no
// sandbox of its own: its home and the workdir writable, the seat's drop
// directory for `pantty handoff note` and `request`, the pantty binary its
// hooks run, and the hook door served by the pane process for its hook forms.
func (d *Driver) jailed(lf state.LaunchFile, auth state.Authority) (state.LaunchFile, error) {
	caps := d.Ad.Caps()
	var flags []string
	for _, h := range caps.HookFlags {
		flags = append(flags, h.Name)
	}
	readable := []string{d.Pantty, lf.Argv[0]}
	if caps.JailReadable != nil {
		readable = append(readable, caps.JailReadable(d.S, d.Cfg)...)
	}
	return jail.Wrap(lf, jail.Spec{Seat: d.S, Workdir: d.Cfg.Workdir, Writable: caps.Jail(d.S, d.Cfg),
		Readable: readable, Sockets: []string{d.sess.Socket}, Drop: auth.Drop}, flags)
}
