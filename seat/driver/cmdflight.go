package driver

import (
	"errors"
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// cmdFlight is the command the door pasted and whose acceptance the driver
// awaits; nothing else is pasted meanwhile. Until the harness is given its
// Enter (entering: a harness whose box must first show the command settled),
// the flight belongs to the pane watch that will send it.
type cmdFlight struct {
	cmd      guard.Command
	req      *state.Request // the request to answer; nil when a compaction cycle sent it (the cycle answers)
	sent     time.Time      // when the door began to paste it: the harness's answers are looked for from here
	until    time.Time
	started  string // the start hook's event file, once it fired
	blocked  string // why pantty's start hook blocked it ("" when it did not)
	entering bool
	launch   time.Time   // Driver.launchAt when it was pasted
	failed   func(error) // what the sender does when it could not be entered
	// notPasted is why the last paste put nothing in the box (a dialog, a
	// draft, no box drawn): the command waits for a free box, as a queued
	// one does, until waitUntil; nil while a paste is under way.
	notPasted error
	waitUntil time.Time
	ahead     flight.Ahead // its durable record, written at the first paste
	// onServer: sent to the seat's app server (asWay.command), not pasted;
	// turn is the turn the server started for it (turn/started after the
	// call), whose turn/completed is its refusal's witness.
	onServer bool
	turn     string
}

// commandBusyCap bounds how long a command the harness is visibly busy with
// may take to answer past the accept window (a slow API behind /context).
const commandBusyCap = time.Minute

// commandLatePoll is how often a cycle's /compact, started and past the accept
// window, is checked for a late answer (an error ends it before its timeout).
const commandLatePoll = 2 * time.Second

// sendCommand pastes c through the command door; req is the request to
// answer (nil for a cycle's own /compact). failed runs, on the loop, if c
// could not be entered; from then on the flight is the harness's answer to
// wait for. The loop is not held while the box settles (Run).
func (d *Driver) sendCommand(c guard.Command, req *state.Request, failed func(error)) {
	// Transcript times have millisecond precision.
	sent := d.now().Truncate(time.Millisecond)
	// A request waits for a free box as long as it would have waited in the
	// queue; a cycle's own /compact, as long as the cycle may take.
	until := d.now().Add(d.Cfg.Compaction.Timeout.Duration)
	if req != nil {
		until = commandDeadline(*req)
	}
	f := &cmdFlight{cmd: c, req: req, sent: sent, entering: true, launch: d.launchAt, failed: failed, waitUntil: until}
	d.cmdRun, d.cmdHeld = f, ""
	d.way().command(f)
}

// errRelaunchedUnsent is a waiting command failed by a relaunch before any
// paste of it reached the harness: not sent, and known to be.
var errRelaunchedUnsent = errors.New("not pasted before the relaunch")

// pasteCommand sends f's command through the door (Run), its record
// written once: a paste that put nothing in the box is tried again under
// the same record.
func (d *Driver) pasteCommand(f *cmdFlight) {
	entered := func(err error) { d.commandEntered(f, err) }
	if f.ahead.Text() == "" {
		ahead, err := d.commandAhead(f.cmd)
		if err != nil {
			entered(err)
			return
		}
		f.ahead = ahead
	}
	d.runAhead(f.cmd, f.ahead, func() bool { return d.cmdRun == f }, entered)
}

// repasteCommand pastes again a command whose paste put nothing in the box,
// once nothing holds it back (a person in relay, a provider wait, an outage
// before its probe: commandHeldBack) and the pane is free, or fails it when
// its wait is over.
func (d *Driver) repasteCommand(f *cmdFlight) {
	if !d.now().Before(f.waitUntil) {
		d.cmdRun, d.cmdHeld = nil, ""
		f.failed(fmt.Errorf("%w (waited until %s)", f.notPasted, f.waitUntil.UTC().Format(time.RFC3339)))
		return
	}
	why := d.commandHeldBack()
	if why == "" {
		why, _ = d.paneNotFree()
	}
	if why != "" {
		if why != d.cmdHeld {
			d.logf("command door: %s waits: %s", f.cmd.Text(), why)
		}
		d.cmdHeld = why
		return
	}
	f.notPasted, d.cmdHeld = nil, ""
	f.sent = d.now().Truncate(time.Millisecond)
	d.logf("command door: the box is free again: %s pasted again", f.cmd.Text())
	d.pasteCommand(f)
}

// commandEntered is the end of the door's paste: Enter went (err nil) and the
// accept window starts, or the command never reached the harness.
func (d *Driver) commandEntered(f *cmdFlight, err error) {
	if d.cmdRun != f {
		return // ended meanwhile (its cycle ended)
	}
	if errors.Is(err, flight.ErrNotPasted) && d.now().Before(f.waitUntil) {
		// Nothing reached the harness: the screen showed no free box at the
		// paste, 11 ms after the boundary found one (Gemini CLI 0.61.0 in
		// CI, 2026-12-06: a compaction cycle failed on it). The command
		// waits for the box, as a queued one does.
		d.logf("command door: %s not pasted, waits for a free input box: %v", f.cmd.Text(), err)
		f.notPasted = err
		d.cmdT.set(commandPoll)
		return
	}
	if err != nil {
		d.cmdRun, d.cmdHeld = nil, ""
		f.failed(err)
		return
	}
	f.entering = false
	f.until = d.now().Add(hookwire.CommandAcceptWindow)
	d.cmdT.set(commandPoll)
}

// commandHeldBack says what keeps a waiting command from the pane besides
// the box itself, or "": the holds maybeSubmit applies before a command is
// first pasted (a person in relay mode, a blocked seat, a provider wait, an
// outage before its next probe), which a re-paste must keep too.
func (d *Driver) commandHeldBack() string {
	now := d.now()
	switch {
	case d.relayHolds():
		return "a person holds the input (relay mode)"
	case d.blocked != "":
		return d.blocked
	case now.Before(d.notBefore):
		return "a provider wait until " + d.notBefore.UTC().Format(time.RFC3339)
	case d.outage != nil && now.Before(d.outage.probeAt):
		return "the queue is held for a " + string(d.outage.class) + " outage: " + d.outageText()
	}
	return ""
}
