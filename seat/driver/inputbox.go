package driver

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/panetext"
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

// boxLook is what the pane shows where the harness takes keys.
type boxLook struct {
	busy     bool   // a turn runs (the adapter's Busy)
	dialog   string // no input box the adapter recognises: what stands there instead, one line
	draft    string // text in the box that pantty did not put there
	leftover bool   // the box holds pantty's own text (its prefix first): C-u may clear it
}

// Hold texts, as the heartbeat's waiting and the logs show them.
const (
	blankScreen = "(a blank screen)" // no box and no words: a harness starting or redrawing
	dialogHold  = "blocked: the harness shows a dialog: "
	draftHold   = "held: a draft in the input box"
)

// errBoxNotFree is a paste or a key the driver did not send because the pane
// showed no free input box at that moment (a dialog, a person's draft).
var errBoxNotFree = errors.New("the input box is not free")

// readBox classifies a screen. An adapter that cannot read its box
// (no Composer) gets the old behaviour: the box counts as free.
func (d *Driver) readBox(screen string) boxLook {
	if d.Ad.Busy(screen) {
		return boxLook{busy: true}
	}
	caps := d.Ad.Caps()
	if caps.Composer == nil {
		return boxLook{}
	}
	text, ok := caps.Composer(screen)
	if !ok || caps.InputReady != nil && !caps.InputReady(screen) {
		return boxLook{dialog: dialogWords(screen)}
	}
	switch text = strings.TrimSpace(text); {
	case text == "":
		return boxLook{}
	case strings.HasPrefix(text, strings.TrimSpace(guard.Prefix)), d.strandedCmd != "" && text == d.strandedCmd:
		return boxLook{leftover: true}
	}
	return boxLook{draft: text}
}

// lookAtBox captures the pane and classifies it.
func (d *Driver) lookAtBox(ctx context.Context) (boxLook, error) {
	screen, err := d.tm.Capture(ctx, d.sess.PaneID)
	if err != nil {
		return boxLook{}, err
	}
	return d.readBox(screen), nil
}

// dialogLines is how many of a dialog's lines its one-line description keeps,
// and dialogWidth how long that line may be.
const (
	dialogLines = 3
	dialogWidth = 160
)

// dialogWords describes what stands where the input box should be: its first
// non-empty lines, one line, cut, credentials redacted. Dialogs draw their own
// top rule (Claude Code's trust and upgrade dialogs, the simulator's), so
// that is what the lines below the screen's last rule are; with no rule, the
// screen's last lines.
func dialogWords(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	from := max(0, len(lines)-2*dialogLines)
	for i := len(lines) - 1; i >= 0; i-- {
		if panetext.IsRule(lines[i]) {
			if i < len(lines)-1 {
				from = i + 1
			}
			break
		}
	}
	var words []string
	for _, l := range lines[from:] {
		if t := strings.TrimSpace(l); t != "" {
			words = append(words, t)
			if len(words) == dialogLines {
				break
			}
		}
	}
	if len(words) == 0 {
		return blankScreen
	}
	return clip(state.Redact(strings.Join(words, " / ")), dialogWidth)
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
	case err != nil || l.busy:
		return false
	case l.dialog != "":
		d.hold(machine.DialogShown, dialogHold+l.dialog, "")
		return true
	case l.draft != "":
		d.hold(machine.DraftHeld, draftHold, l.draft)
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
	d.setMode(state.ModeDirect, "the input box is free again (was "+kind(was)+": "+clip(was[len(kind(was))+1:], 80)+")", nil)
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

// enterAllowed says whether Enter may go to the pane now, or why not: never
// onto a screen without the input box (it would answer the dialog).
func (d *Driver) enterAllowed(screen string) string {
	if l := d.readBox(screen); l.dialog != "" {
		return dialogHold + l.dialog
	}
	return ""
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
