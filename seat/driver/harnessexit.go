package driver

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"golang.org/x/sys/unix"
)

// exitWordHistory is how much scrollback the capture of a dead pane includes.
const exitWordHistory = 200

// exitWordLines is how many of the pane's last non-empty lines are kept.
const exitWordLines = 12

// lastWords captures what the seat's (dead) pane shows, before a respawn
// clears it: tmux keeps a dead pane with remain-on-exit. tmux's own
// "Pane is dead" banner is dropped; secrets are redacted.
func (d *Driver) lastWords(pane *tmux.Pane) []string {
	if pane == nil && d.onAppServer() {
		return d.serverWords()
	}
	if pane == nil {
		return nil
	}
	ctx, cancel := d.ctx()
	defer cancel()
	screen, err := d.tm.CaptureWithHistory(ctx, pane.ID, exitWordHistory)
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		lines = append(lines, state.Redact(l))
	}
	return keepWords(lines)
}

// errorWords mark a line that says what went wrong.
var errorWords = []string{"error", "unknown", "invalid", "not found", "failed", "denied", "refused", "cannot", "unable"}

// keepWords keeps the pane's last exitWordLines lines and, when the tail
// holds no line that says what went wrong but an earlier one does, the first
// such line ahead of them: a CLI that prints its error and then its whole
// usage (Gemini CLI 0.61.0: "Unknown arguments: such-flag, suchFlag" above
// some 40 lines of options; measured 2026-12-04) would otherwise leave only
// option lines as its last words.
func keepWords(lines []string) []string {
	if len(lines) <= exitWordLines {
		return lines
	}
	tail := lines[len(lines)-exitWordLines:]
	says := func(l string) bool {
		l = strings.ToLower(l)
		return slices.ContainsFunc(errorWords, func(w string) bool { return strings.Contains(l, w) })
	}
	for _, l := range tail {
		if says(l) {
			return tail
		}
	}
	for _, l := range lines[:len(lines)-exitWordLines] {
		if says(l) {
			return append([]string{l}, tail...)
		}
	}
	return tail
}

// noteExit records a harness exit with its words (harness-exit.toml,
// driver.log): the launches in a row that ended before the harness came up
// are d.exits.BeforeReady (machine.AfterExit counted this one), and gaveUp
// says the driver stops relaunching.
func (d *Driver) noteExit(why string, pane *tmux.Pane, wasReady, gaveUp bool) {
	h := state.HarnessExit{At: d.now().UTC(), Why: why, Launch: d.sess.Launches, BeforeReady: !wasReady,
		InARow: d.exits.BeforeReady, Lines: d.lastWords(pane), GaveUp: gaveUp}
	if pane != nil {
		h.Status = pane.DeadStatus
	}
	d.logf("harness exited (%s); its last words: %s", why, h.Words())
	if err := d.S.HarnessExitFile().Write(h); err != nil {
		d.logf("harness-exit.toml: %v", err)
	}
	d.lastExit = h
}

// giveUp ends a driver whose harness keeps exiting before it comes up: the
// waiting start (if any) gets the harness's words, the loop exits 1, and the
// dead pane is left for a person to inspect.
func (d *Driver) giveUp() {
	err := fmt.Errorf("the harness exited %d times in a row before it came up (last: %s); its last words: %s",
		d.exits.BeforeReady, d.lastExit.Why, d.lastExit.Words())
	d.logf("giving up: %v", err)
	d.to(machine.GaveUp, "gave up: "+err.Error())
	d.report(seat.Progress{State: "error", Text: err.Error()})
	code := 1
	d.exit = &code
}

// procWatch tells, without polling, when one process exits: it waits on a
// pidfd (Linux), which becomes readable when the process terminates, whoever
// its parent is. The driver watches the harness this way because tmux 3.3a can
// lose a pane's SIGCHLD, and then neither the pane's dead flag nor the
// pane-died hook says anything until some other child of the server exits.
type procWatch struct {
	exited chan int
	stopW  *os.File
}

// watchProcess starts watching pid; ok=false when pidfds are not available
// (then the heartbeat check remains the safety net).
func watchProcess(pid int) (*procWatch, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, false
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(fd)
		return nil, false
	}
	pw := &procWatch{exited: make(chan int, 1), stopW: w}
	go func() {
		defer unix.Close(fd)
		defer r.Close()
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && fds[0].Revents != 0 {
				pw.exited <- pid
			}
			return
		}
	}()
	return pw, true
}

// stop ends the watch (the process may live on).
func (p *procWatch) stop() {
	if p != nil {
		p.stopW.Close()
	}
}

// done is the channel that receives the pid when the process exits.
func (p *procWatch) done() <-chan int {
	if p == nil {
		return nil
	}
	return p.exited
}
