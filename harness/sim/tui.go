package sim

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// rewindWindow is how close two Escapes on an empty idle composer must be
// to open Claude's rewind menu.
const rewindWindow = 500 * time.Millisecond

// exitWindow is how close two Ctrl-C (or Ctrl-D) must be to exit.
const exitWindow = time.Second

// activity is the one thing the simulated model is busy with.
type activity struct {
	turn    *turn       // a model turn, or
	compact *compactReq // a compaction
	timer   *time.Timer
}

// tui is the interactive simulator: a single event loop owns all state, so
// keystrokes, timers and hook runs never race. Hooks run synchronously in
// the loop (the screen freezes, input queues), as in Claude.
type tui struct {
	e       *engine
	out     io.Writer
	sizeFd  int
	events  chan func()
	stopped chan struct{} // closed when the loop ends, so late timers don't block

	ready     bool
	announced bool    // SessionStart fired ahead of the box (PANTTY_SIM_BOX)
	live      decoder // keys typed after ready
	backlog   decoder // keys that arrived before ready, replayed when idle
	escGen    int     // invalidates stale Escape timers

	box      string
	commitAt time.Time // an Enter before this inserts a newline (paste window)
	// drawn is what the box shows while a paste has not committed: the box
	// as it was before the paste. A paste is drawn only once it commits, so
	// "the box shows the text" means an Enter now submits it (the order
	// the real harnesses were measured to have: docs/performance-history.md).
	drawn       string
	swallowed   int  // Enters swallowed for the current box
	placeholder bool // show "Resend your message to try again"
	busy        *activity
	rewind      bool
	dialog      bool // a modal dialog is drawn in place of the box (dialog.go)
	dialogSel   int  // its highlighted option
	// startAfterDialog: SessionStart fires when the dialog is answered
	// (PANTTY_SIM_DIALOG=before).
	startAfterDialog bool
	lastEsc          time.Time
	lastExitKey      time.Time
	notice           string
	footer           string
	scroll           []string
	idleGen          int

	done bool
	code int
}

func newTUI(e *engine, out io.Writer) *tui {
	u := &tui{e: e, out: out, sizeFd: -1, events: make(chan func(), 64), stopped: make(chan struct{})}
	u.backlog.lfIsEnter = true
	u.scroll = append(u.scroll, e.history...)
	e.say = u.addLine
	return u
}

func (u *tui) addLine(l string) {
	u.scroll = append(u.scroll, l)
	if len(u.scroll) > 500 {
		u.scroll = u.scroll[len(u.scroll)-500:]
	}
}

// post schedules f on the event loop from a timer goroutine.
func (u *tui) post(f func()) {
	select {
	case u.events <- f:
	case <-u.stopped:
	}
}

// after runs f on the event loop after d.
func (u *tui) after(d time.Duration, f func()) *time.Timer {
	return time.AfterFunc(d, func() { u.post(f) })
}

// run is the event loop. It returns the process exit code.
func (u *tui) run(in <-chan []byte, sigs <-chan os.Signal) int {
	defer close(u.stopped)
	u.render()
	readyTimer := time.NewTimer(u.e.cfg.startup)
	defer readyTimer.Stop()
	for !u.done {
		select {
		case b, ok := <-in:
			if !ok {
				in = nil
				if !u.e.cfg.stubborn {
					u.hangup()
				}
				break
			}
			if !u.ready {
				u.backlog.feed(b)
				break
			}
			u.live.feed(b)
			u.pump(false)
		case f := <-u.events:
			f()
		case <-readyTimer.C:
			u.becomeReady()
		case <-sigs:
			if !u.e.cfg.stubborn {
				u.hangup()
			}
		}
		if !u.done {
			u.render()
		}
	}
	return u.code
}

// becomeReady turns bracketed paste on and only then announces the session,
// so that anyone waiting for SessionStart can paste safely.
func (u *tui) becomeReady() {
	if u.e.cfg.box > 0 && !u.announced {
		// PANTTY_SIM_BOX: SessionStart first, the box and the keys later.
		u.announced = true
		u.e.sessionStartHook(u.e.startSource())
		u.after(u.e.cfg.box, u.becomeReady)
		return
	}
	io.WriteString(u.out, "\x1b[?2004h")
	u.ready = true
	if u.e.cfg.dialog != "" {
		// PANTTY_SIM_DIALOG: the session starts with a dialog where the box
		// would be; the box is never drawn before it.
		u.openDialog()
	}
	u.render()
	if u.e.cfg.dialog == "before" && !u.announced {
		// Claude Code's trust question: SessionStart only once it is answered.
		u.startAfterDialog = true
	} else if !u.announced {
		u.e.sessionStartHook(u.e.startSource())
	}
	u.refreshStatus()
	if p := u.e.cfg.prompt; p != "" {
		u.submit(p)
	}
	u.drainBacklog()
}

// pump decodes and handles every complete key typed after ready.
func (u *tui) pump(flush bool) {
	for !u.done {
		k, ok := u.live.next(flush)
		if !ok {
			break
		}
		flush = false
		u.handle(k)
	}
	u.escGen++
	if u.live.waiting() {
		gen := u.escGen
		u.after(u.e.cfg.esc, func() {
			if gen == u.escGen {
				u.pump(true)
			}
		})
	}
}

// drainBacklog replays pre-ready input one key at a time while idle, the
// way a line discipline hands over queued lines: each line is submitted on
// its own once the previous turn is over.
func (u *tui) drainBacklog() {
	for !u.done && u.ready && u.busy == nil && !u.rewind && !u.dialog {
		k, ok := u.backlog.next(true)
		if !ok {
			return
		}
		u.handle(k)
	}
}

func (u *tui) handle(k key) {
	if u.dialog {
		u.dialogKey(k)
		return
	}
	if u.rewind { // any key closes the rewind menu, Escape included
		u.rewind = false
		return
	}
	if k.kind != keyInterrupt && k.kind != keyEOF {
		u.notice = ""
	}
	switch k.kind {
	case keyText:
		u.box += k.text
	case keyPaste:
		if !u.pasting() {
			u.drawn = u.box
		}
		u.box += k.text
		u.commitAt = time.Now().Add(u.e.cfg.commit)
		// The loop redraws after every event: this one draws the paste
		// once it has committed.
		u.after(u.e.cfg.commit, func() {})
	case keyNewline:
		u.box += "\n"
	case keyBackspace:
		if u.box != "" {
			_, n := utf8.DecodeLastRuneInString(u.box)
			u.box = u.box[:len(u.box)-n]
		}
	case keyClear:
		u.box, u.swallowed = "", 0
	case keyEnter:
		u.enter()
	case keyEsc:
		if !u.e.cfg.broken["escape"] {
			u.escape()
		}
	case keyInterrupt, keyEOF:
		u.exitKey(k.kind)
	}
}

// pasting reports whether the last paste has not committed yet.
func (u *tui) pasting() bool { return time.Now().Before(u.commitAt) }

// shownBox is the box as the screen draws it: without a paste that has not
// committed yet.
func (u *tui) shownBox() string {
	if u.pasting() {
		return u.drawn
	}
	return u.box
}

// enter follows Claude's rules, in order: ignored while busy; a newline
// inside the paste commit window; swallowed when scripted; a trailing
// backslash becomes a newline; otherwise the box is submitted.
func (u *tui) enter() {
	if u.busy != nil {
		return
	}
	if u.pasting() {
		u.box += "\n"
		return
	}
	if n := swallowCount(u.box); u.swallowed < n {
		u.swallowed++
		return
	}
	if strings.TrimSpace(u.box) == "" {
		return
	}
	if strings.HasSuffix(u.box, "\\") {
		u.box = strings.TrimSuffix(u.box, "\\") + "\n"
		return
	}
	text := u.box
	u.box, u.swallowed = "", 0
	u.submit(text)
}

// submit dispatches sigil input locally or sends a prompt to the model.
func (u *tui) submit(text string) {
	u.placeholder = false
	u.idleGen++
	if u.e.isDispatch(text) {
		u.dispatch(text)
		return
	}
	u.addLine("> " + firstLine(text))
	if d := u.e.cfg.submit; d > 0 {
		// The window between an accepted Enter and the turn's start (and its
		// UserPromptSubmit), stretched: the pane shows no running turn yet.
		u.after(d, func() { u.startPrompt(text) })
		return
	}
	u.startPrompt(text)
}

// startPrompt fires UserPromptSubmit for an accepted prompt and starts its turn.
func (u *tui) startPrompt(text string) {
	promptID, res := u.e.userPromptSubmit(text)
	if res.blocked {
		u.addLine("  ⎿  UserPromptSubmit operation blocked by hook: " + res.stderr)
		return
	}
	t := u.e.beginTurn(text, promptID, res.stdout)
	a := &activity{turn: t}
	u.busy = a
	switch {
	case t.crash:
		u.after(t.duration(u.e.cfg.turn)/2, func() {
			fmt.Fprintln(os.Stderr, "sim: [sim:crash] marker: exiting mid-turn")
			u.done, u.code = true, 3
		})
	case t.hang:
	default:
		a.timer = u.after(t.duration(u.e.cfg.turn), func() { u.finish(a) })
	}
}

func (u *tui) dispatch(text string) {
	res := u.e.dispatch(text)
	if res.cleared {
		u.scroll = nil
	}
	u.addLine("> " + firstLine(text))
	for _, l := range res.lines {
		u.addLine("  " + l)
	}
	switch {
	case res.exit:
		u.quit("prompt_input_exit")
	case res.compact != nil:
		a := &activity{compact: res.compact}
		u.busy = a
		a.timer = u.after(u.e.cfg.turn, func() { u.finish(a) })
	case res.cleared:
		u.refreshStatus()
	}
}

// finish ends an activity whose time is up (unless Escape got there first).
func (u *tui) finish(a *activity) {
	if u.busy != a {
		return
	}
	u.busy = nil
	switch {
	case a.compact != nil:
		u.e.finishCompact(a.compact)
	case a.turn.failure != nil:
		u.e.failTurn(a.turn)
		u.placeholder = true
	default:
		u.e.completeTurn(a.turn)
	}
	if a.turn != nil && strings.Contains(a.turn.prompt, dialogMarker) {
		u.openDialog()
	}
	u.refreshStatus()
	u.armIdle()
	u.drainBacklog()
}

// escape cancels what is running, or (twice, on an empty idle composer)
// opens the rewind menu.
func (u *tui) escape() {
	if a := u.busy; a != nil {
		u.busy = nil
		if a.timer != nil {
			a.timer.Stop()
		}
		if a.turn != nil {
			u.e.interruptTurn(a.turn)
			u.box = a.turn.prompt + u.box
		} else {
			u.addLine("  ⎿  Compaction interrupted")
		}
		u.lastEsc = time.Time{}
		u.refreshStatus()
		u.drainBacklog()
		return
	}
	if u.box != "" {
		return
	}
	now := time.Now()
	if !u.lastEsc.IsZero() && now.Sub(u.lastEsc) <= rewindWindow {
		u.rewind, u.lastEsc = true, time.Time{}
		return
	}
	u.lastEsc = now
}

// exitKey is Ctrl-C / Ctrl-D: interrupt when busy, clear a non-empty box,
// and exit when pressed twice on an empty one.
func (u *tui) exitKey(k keyKind) {
	if u.busy != nil && k == keyInterrupt {
		u.escape()
		return
	}
	if u.box != "" {
		if k == keyInterrupt {
			u.box, u.swallowed = "", 0
		}
		return
	}
	now := time.Now()
	if now.Sub(u.lastExitKey) <= exitWindow {
		u.quit("prompt_input_exit")
		return
	}
	u.lastExitKey = now
	name := "Ctrl-C"
	if k == keyEOF {
		name = "Ctrl-D"
	}
	u.notice = "Press " + name + " again to exit"
}

// quit ends the session: SessionEnd fires, then the loop stops.
func (u *tui) quit(reason string) {
	u.e.sessionEndHook(reason)
	u.done, u.code = true, 0
}

// hangup is the pane going away (SIGHUP, SIGTERM, closed input).
func (u *tui) hangup() {
	if !u.done {
		u.quit("other")
	}
}

func (u *tui) refreshStatus() {
	u.footer = u.e.statusLine()
}

// armIdle sends Claude's idle Notification if nothing happens for a while.
func (u *tui) armIdle() {
	u.idleGen++
	gen := u.idleGen
	u.after(u.e.cfg.idle, func() {
		if gen == u.idleGen && u.busy == nil {
			u.e.notificationHook("idle_prompt", "Claude is waiting for your input")
		}
	})
}
