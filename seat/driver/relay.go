package driver

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
)

// observeClients looks at the clients attached to the seat's session and
// switches the mode: any client that can type (not control mode, not
// read-only) means relay; none means direct.
func (d *Driver) observeClients(why string) {
	if d.Cfg.Relay == config.RelayIgnore || d.Cfg.Shape == config.ShapeTurn || d.sess.TmuxName == "" {
		return
	}
	ctx, cancel := d.ctx()
	clients, err := d.tm.Clients(ctx)
	cancel()
	if err != nil {
		d.logf("relay: list clients: %v (mode unchanged)", err)
		return
	}
	var typing []string
	for _, c := range clients {
		if c.Session != d.sess.TmuxName || c.ControlMode || c.ReadOnly || d.relayIgnored[c.PID] {
			continue
		}
		typing = append(typing, fmt.Sprintf("%s pid %d", c.TTY, c.PID))
	}
	switch {
	case len(typing) > 0 && d.mode.Mode != state.ModeRelay:
		d.setMode(state.ModeRelay, "observed: "+strings.Join(typing, ", ")+" attached ("+why+")", typing)
	case len(typing) == 0 && d.mode.Mode == state.ModeRelay && !d.relayPinned:
		d.leaveRelay("observed: no typing client attached (" + why + ")")
	case len(typing) == 0:
		d.relayPinned = false
	}
}

// setMode records a mode switch atomically (mode.toml, latest wins).
func (d *Driver) setMode(mode, why string, clients []string) {
	d.mode = state.Mode{Mode: mode, Since: d.now().UTC(), Why: why, Clients: clients}
	if err := d.S.ModeFile().Write(d.mode); err != nil {
		d.logf("mode: %v", err)
	}
	d.logf("mode %s: %s", mode, why)
	if mode == state.ModeRelay {
		d.endHold() // the person at the pane owns it now; leaving relay looks again
		d.to(machine.RelayEntered, why)
	} else if d.phase == machine.Relay {
		d.to(machine.RelayLeft, "")
	}
}

// leaveRelay returns to direct, unless the person left a draft in the input
// box: that is never wiped; the queue waits until the box is empty (the person
// submits or clears it), and mode.toml ("held", the draft) and the heartbeat
// say so. The box is looked at again whenever the pane changes (boxHolds,
// inputbox.go).
func (d *Driver) leaveRelay(why string) {
	if draft := d.draft(); draft != "" {
		d.logf("relay ended (%s) but a draft is in the input box: holding the queue (%q)", why, state.Truncate(draft, 80))
		d.hold(machine.DraftHeld, draftHold, draft)
		return
	}
	d.setMode(state.ModeDirect, why, nil)
}

// draft reads the input box, or "" when it is empty or cannot be read. While
// the command door waits for its pasted command to settle, the box holds
// pantty's own text, not a person's draft.
func (d *Driver) draft() string {
	composer := d.Ad.Caps().Composer
	if composer == nil || d.sess.PaneID == "" || d.cmdRun != nil && d.cmdRun.entering {
		return ""
	}
	ctx, cancel := d.ctx()
	screen, err := d.tm.Capture(ctx, d.sess.PaneID)
	cancel()
	if err != nil {
		return ""
	}
	draft, ok := composer(screen)
	if !ok {
		return ""
	}
	return strings.TrimSpace(draft)
}

// relayHolds reports whether the mode keeps the driver from submitting. A
// draft left at the end of relay is a hold of the pane (boxHolds), which
// clears mode.toml's draft when the box is empty.
func (d *Driver) relayHolds() bool {
	return d.mode.Mode == state.ModeRelay
}

// loadMode restores the recorded mode at driver start, then observes.
func (d *Driver) loadMode() {
	m, err := d.S.ModeFile().Read()
	if err == nil {
		d.mode = m
	} else if !errors.Is(err, fs.ErrNotExist) {
		d.logf("mode.toml: %v (observing afresh)", err)
	}
	switch d.mode.Mode {
	case "":
		d.setMode(state.ModeDirect, "driver start: no person observed yet", nil)
	case state.ModeDialog, state.ModeDraft:
		// An older driver's hold: the box is looked at again at the first
		// boundary (this driver's own, from an adopted pane, stands).
		if d.held == "" {
			d.setMode(state.ModeDirect, "driver start: the input box is looked at again (was "+d.mode.Why+")", nil)
		}
	}
	d.observeClients("driver start")
}

// onRelayRequest handles `pantty seat attach` (on/off around the attach) and
// `pantty seat relay --off` (forced: the clients attached now are ignored, for
// when observation fails).
func (d *Driver) onRelayRequest(r state.Request) {
	switch r.Args {
	case "on":
		d.relayPinned = true
		d.setMode(state.ModeRelay, "pantty seat attach (pid "+fmt.Sprint(r.FromPID)+")", nil)
		d.answer(r, nil, "relay: the driver submits nothing until the person leaves")
	case "off":
		d.relayPinned = false
		d.observeClients("pantty seat attach returned")
		d.answer(r, nil, "mode "+d.mode.Mode)
	case "force-off":
		ctx, cancel := d.ctx()
		clients, _ := d.tm.Clients(ctx)
		cancel()
		var still []string
		for _, c := range clients {
			if c.Session == d.sess.TmuxName && !c.ControlMode && !c.ReadOnly {
				d.relayIgnored[c.PID] = true
				still = append(still, fmt.Sprintf("%s pid %d", c.TTY, c.PID))
			}
		}
		d.relayPinned = false
		d.leaveRelay("forced off by 'pantty seat relay --off'")
		detail := "relay forced off: observation is overridden"
		if len(still) > 0 {
			detail += "; still attached and now ignored: " + strings.Join(still, ", ")
		}
		d.answer(r, nil, detail)
	default:
		d.answer(r, fmt.Errorf("relay: want on, off or force-off, got %q", r.Args), "")
	}
}
