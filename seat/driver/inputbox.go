package driver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/state"
)

// Keys only into the input box. A pane that shows anything else where the
// harness takes keys — a dialog after an upgrade, a login or trust question,
// an update notice — takes the paste and the Enter as answers to it: Claude
// Code's "Try the new fullscreen renderer?" took a board message's Enter
// retries as "Yes, try it" and changed the person's settings. And text in the
// box that pantty did not put there is a person's draft: clearing it loses
// their work, submitting it sends what they did not mean to send. So the
// driver looks at the pane before every paste, Enter and command, and the
// adapter's box reader (harness.Capabilities.Composer, with InputReady where
// the adapter has one) decides; pantty answers no dialog itself.

// Hold texts, as the heartbeat's waiting and the logs show them (the
// flight's: one spelling for the driver and the box reader).
const (
	blankScreen = flight.BlankScreen
	dialogHold  = flight.DialogHold
	draftHold   = flight.DraftHold
)

// pane is the transport to the harness of the current launch: through the
// launch's control-mode client (paneKeys) when there is one, else one tmux
// process per command.
func (d *Driver) pane() flight.Pane {
	if d.onAppServer() {
		return flight.Pane{Keys: noPane{}}
	}
	if d.keys != nil {
		return flight.Pane{Keys: d.keys, ID: d.sess.PaneID}
	}
	return flight.Pane{Keys: d.tm, ID: d.sess.PaneID}
}

// box is the adapter's reader of its input box. pantty's own leftover is
// text starting with its prefix, or the command the door left in the box
// under a dialog (strandedCmd).
func (d *Driver) box() flight.Box {
	caps := d.Ad.Caps()
	stranded := d.strandedCmd
	return flight.Box{Busy: d.Ad.Busy, Composer: caps.Composer, InputReady: caps.InputReady,
		Own: func(text string) bool {
			return strings.HasPrefix(text, strings.TrimSpace(guard.Prefix)) || stranded != "" && text == stranded
		}}
}

// lookAtBox captures the pane and classifies it.
func (d *Driver) lookAtBox(ctx context.Context) (flight.Look, error) {
	screen, err := d.pane().Screen(ctx)
	if err != nil {
		return flight.Look{}, err
	}
	return d.box().Read(screen), nil
}

// heldByDialog reports whether the hold is a dialog with words on the pane (a
// blank screen is a harness starting or redrawing, no question to answer).
func (d *Driver) heldByDialog() bool {
	return strings.HasPrefix(d.held, dialogHold) && d.held != dialogHold+blankScreen
}

// boxHolds runs at a boundary before a message goes out: it reports whether
// the pane keeps the queue waiting, and records the hold (phase relay, the
// heartbeat's waiting names it) or its end. A busy pane or a pane that cannot
// be read is left to deliver's own checks.
func (d *Driver) boxHolds() bool {
	if d.Cfg.Shape == config.ShapeTurn || d.sess.PaneID == "" {
		return false
	}
	ctx, cancel := d.ctx()
	l, err := d.lookAtBox(ctx)
	cancel()
	switch {
	case err != nil || l.Busy:
		return false
	case l.Dialog != "":
		d.hold(machine.DialogShown, dialogHold+l.Dialog, "")
		return true
	case l.Draft != "":
		d.hold(machine.DraftHeld, draftHold, l.Draft)
		return true
	}
	d.releaseHold()
	return false
}

// hold records that the pane holds the queue (mode.toml "dialog" or "draft", so status,
// recover and pantty events see it; the heartbeat's phase relay and waiting),
// and has pane changes reported so that the release is noticed as it happens.
// draft is the person's text, kept in mode.toml.
func (d *Driver) hold(ev machine.Event, why, draft string) {
	d.watchPaneOutput(true)
	if d.held == why && d.phase == machine.Relay {
		return
	}
	mode := state.ModeDialog
	if ev == machine.DraftHeld {
		mode = state.ModeDraft
	}
	if d.mode.Mode != mode { // once per hold: a draft being typed is not a new event each key
		d.logf("queue %s", why)
		d.mode = state.Mode{Mode: mode, Since: d.now().UTC(), Why: why, Draft: draft}
		if err := d.S.ModeFile().Write(d.mode); err != nil {
			d.logf("mode: %v", err)
		}
	}
	d.held = why
	d.to(ev, why)
}

// kind is a hold text's first word: blocked (a dialog) or held (a draft).
func kind(why string) string { k, _, _ := strings.Cut(why, ":"); return k }

// releaseHold ends a hold: the box is back and empty.
func (d *Driver) releaseHold() {
	if d.held == "" {
		return
	}
	was := d.held
	d.endHold()
	d.logf("the input box is free again: the queue goes on (was %s)", was)
	d.setMode(state.ModeDirect, "the input box is free again (was "+kind(was)+": "+flight.Clip(was[len(kind(was))+1:], 80)+")", nil)
}

// endHold forgets a hold and turns its pane watch off (the box is free, or a
// person attached and relay owns the pane now).
func (d *Driver) endHold() {
	d.held = ""
	d.watchPaneOutput(false)
}

// boxPoll is how often a held queue looks at the pane when no tmux control
// client reports its changes (the watch could not be started): a person
// clearing a draft or answering a dialog should not wait for the heartbeat.
const boxPoll = 250 * time.Millisecond

// watchPaneOutput turns the control client's pane-output wake-ups on while a
// hold lasts (tmux.Watch.Notify), on whichever watch is current (a relaunch
// starts a new one), and off after it.
func (d *Driver) watchPaneOutput(on bool) {
	if !on {
		if d.notified != nil {
			d.notified.Notify(false)
			d.notified = nil
		}
		d.boxT.stop()
		return
	}
	if d.watch != nil && d.notified != d.watch {
		if err := d.watch.Notify(true); err != nil {
			d.logf("pane changes: %v (looking every %s instead)", err, boxPoll)
		} else {
			d.notified = d.watch
		}
	}
	if d.notified == nil || d.notified != d.watch {
		d.boxT.set(boxPoll)
	}
}

// paneChanged is the channel that wakes the loop when the held pane printed
// something; nil (never ready) while nothing is held.
func (d *Driver) paneChanged() <-chan struct{} {
	if d.held == "" || d.notified == nil || d.notified != d.watch {
		return nil
	}
	return d.notified.Changed()
}

// notPasted marks the flight whose paste fillBox refused (a draft or a dialog
// came between the boundary's look and the paste) and has its evidence timer
// look at once: onEvidenceTimeout queues it again, unsent.
func (d *Driver) notPasted(s guard.Submission, err error) {
	fl := d.flight
	if fl == nil || fl.sub.Nonce() != s.Nonce() {
		return
	}
	fl.notPasted = err.Error()
	fl.lookFrom = d.now().Add(-d.Cfg.SubmitTimeout.Duration)
}

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
	if d.strayed != "" {
		d.restoreSession(d.strayed)
	}
}

// draft reads the input box, or "" when it is empty or cannot be read. While
// either door waits for its paste to settle before Enter, the box holds
// pantty's own text, not a person's draft (a command waiting for a free box
// has put nothing there).
func (d *Driver) draft() string {
	composer := d.Ad.Caps().Composer
	if composer == nil || d.sess.PaneID == "" || d.cmdRun != nil && d.cmdRun.entering && d.cmdRun.notPasted == nil || d.flight != nil && d.flight.entering {
		return ""
	}
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
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

// inputReadyLimit bounds the look for the input box after SessionStart.
const inputReadyLimit = 5 * time.Second

// paneAnswer is one watch's answer, for the launch it watched.
type paneAnswer struct {
	launch time.Time // Driver.launchAt when the watch began
	ok     bool
	then   func(ok bool)
}

// watchPane waits on the pane as w says (flight.Await, in a goroutine of
// its own: the loop goes on meanwhile), then runs then on the loop with the
// answer, unless the harness was launched again meanwhile (the answer is
// about a pane that is gone, and the new launch watches for itself).
func (d *Driver) watchPane(w flight.Wait, then func(ok bool)) {
	if d.paneDone == nil {
		d.paneDone = make(chan paneAnswer, 4)
	}
	pane, launch, done := d.pane(), d.launchAt, d.paneDone
	d.watching++
	go func() { done <- paneAnswer{launch: launch, ok: flight.Await(pane, w), then: then} }()
}

// onPaneAnswer runs a watch's continuation on the loop.
func (d *Driver) onPaneAnswer(a paneAnswer) {
	d.watching--
	if !a.launch.Equal(d.launchAt) {
		return
	}
	a.then(a.ok)
}
