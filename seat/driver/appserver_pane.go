package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

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
