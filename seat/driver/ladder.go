package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/tmux"
)

// followLadder keeps the harness on the running rung and applies provider
// waits; it runs at every turn boundary (maybeSubmit), ready or not. It reports
// whether a submission may go ahead now (never before the harness is ready). A change of rung relaunches the harness on the
// same session (a new generation, with why); a wait sets the phase
// waiting-provider and a timer for the earliest unblock.
func (d *Driver) followLadder(now time.Time) bool {
	p, err := outage.PlanOf(d.S, d.Cfg, now)
	if err != nil {
		// Unreadable records are never replaced by defaults: stay where we are.
		d.logf("ladder: %v (staying on the current rung)", err)
		return true
	}
	launched, err := outage.LaunchedRung(d.S)
	if err == nil && launched != p.Rung {
		d.switchRung(p, launched)
		return false
	}
	if !d.ready {
		return false // the phase stays "starting": the harness has not come up yet
	}
	d.notBefore = p.Wait
	if !p.Wait.IsZero() {
		d.waitT.set(p.Wait.Sub(now))
		d.to(machine.ProviderRefused, p.Waiting)
		return false
	}
	if d.phase == machine.Provider {
		d.to(machine.ProviderCleared, "")
	}
	return true
}

// switchRung relaunches the harness on another rung, resuming the same session.
func (d *Driver) switchRung(p outage.Plan, from string) {
	name := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	why := fmt.Sprintf("ladder: rung %s (was %s): %s", name(p.Rung), name(from), p.Why)
	d.logf("%s", why)
	d.Cfg = p.Config
	d.sess.Generation++
	d.sess.Why = why
	// This launch replaces any backed-off relaunch still pending for the old
	// rung: that timer firing later would relaunch the new harness under it.
	d.relaunchT.stop()
	d.exits.Quick = 0
	if d.outage != nil {
		d.outage.probeAt = time.Time{} // another rung, other means: probe it at once
	}
	ctx, cancel := d.ctx()
	panes, err := d.tm.ListPanes(ctx)
	cancel()
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		d.logf("ladder: tmux unobservable: %v (retrying at the next boundary)", err)
		return
	}
	var pane *tmux.Pane
	for i := range panes {
		if panes[i].Session == d.sess.TmuxName && (pane == nil || panes[i].ID == d.sess.PaneID) {
			pane = &panes[i]
		}
	}
	if err := d.launch(pane); err != nil {
		d.logf("ladder: relaunch on rung %s failed: %v", name(p.Rung), err)
		d.to(machine.LaunchFailed, "rung change failed: "+err.Error())
	}
}
