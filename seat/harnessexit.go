package seat

import (
	"fmt"
	"github.com/pantty/pantty/internal/machine"
	"strings"
	"time"

	"github.com/pantty/pantty/tmux"
)

// HarnessExit is harness-exit.toml: the last time the seat's harness exited,
// with the words its pane showed, captured before the pane is respawned (a
// respawn clears them). It is how a person, `status` and `pantty recover` learn
// why a harness will not stay up — "Invalid API key", "ENOTFOUND", "command not
// found" — in the harness's own words instead of a silent relaunch loop.
type HarnessExit struct {
	At          time.Time `toml:"at"`
	Why         string    `toml:"why"`          // how the driver noticed (pane dead, session gone)
	Status      int       `toml:"status"`       // the pane's exit status, when tmux kept the pane
	Launch      int       `toml:"launch"`       // session.toml's launch count at that launch
	BeforeReady bool      `toml:"before_ready"` // the harness never came up on that launch
	InARow      int       `toml:"in_a_row"`     // launches in a row that ended before ready
	GaveUp      bool      `toml:"gave_up"`      // the driver stopped relaunching and exited
	Lines       []string  `toml:"lines"`        // the pane's last non-empty lines
}

// HarnessExitPath is harness-exit.toml.
func (s Seat) HarnessExitPath() string { return s.path("harness-exit.toml") }

// ReadHarnessExit reads harness-exit.toml; fs.ErrNotExist when the harness has
// never been seen to exit.
func (s Seat) ReadHarnessExit() (HarnessExit, error) {
	var v HarnessExit
	return v, ReadState(s.HarnessExitPath(), &v)
}

// Words is the exit's last lines as one line for a log, status or a report.
func (h HarnessExit) Words() string {
	if len(h.Lines) == 0 {
		return "(the pane showed nothing)"
	}
	return strings.Join(h.Lines, " | ")
}

// LastLine is the exit's last line, for a one-line heartbeat.
func (h HarnessExit) LastLine() string {
	if len(h.Lines) == 0 {
		return "(nothing)"
	}
	return h.Lines[len(h.Lines)-1]
}

// MaxLaunchFailures is how many launches in a row may end before the harness
// came up before the driver stops relaunching and exits with the harness's
// words: a missing key, a broken binary or no network do not fix themselves in
// seconds, and a driver that relaunches forever says nothing to anyone. A
// waiting `seat start` exits 1 with the words; `pantty recover` tries again on
// its own schedule, with its backoff.
const MaxLaunchFailures = 3

// exitWordHistory is how much scrollback the capture of a dead pane includes.
const exitWordHistory = 200

// exitWordLines is how many of the pane's last non-empty lines are kept.
const exitWordLines = 12

// lastWords captures what the seat's (dead) pane shows, before a respawn
// clears it: tmux keeps a dead pane with remain-on-exit. tmux's own
// "Pane is dead" banner is dropped; secrets are redacted.
func (d *Driver) lastWords(pane *tmux.Pane) []string {
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
		lines = append(lines, Redact(l))
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
	says := func(l string) bool { return containsAny(strings.ToLower(l), errorWords) }
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

// noteExit records a harness exit with its words (harness-exit.toml, driver.log)
// and counts launches in a row that ended before the harness came up. It
// returns true when the driver should give up (MaxLaunchFailures reached).
func (d *Driver) noteExit(why string, pane *tmux.Pane, wasReady bool) bool {
	if d.exit != nil {
		return false // already giving up or stopping: one record of the last exit is enough
	}
	if wasReady {
		d.launchFailures = 0
	} else {
		d.launchFailures++
	}
	h := HarnessExit{At: time.Now().UTC(), Why: why, Launch: d.sess.Launches, BeforeReady: !wasReady,
		InARow: d.launchFailures, Lines: d.lastWords(pane)}
	if pane != nil {
		h.Status = pane.DeadStatus
	}
	h.GaveUp = d.launchFailures >= MaxLaunchFailures
	d.logf("harness exited (%s); its last words: %s", why, h.Words())
	if err := d.S.Write(d.S.HarnessExitPath(), h); err != nil {
		d.logf("harness-exit.toml: %v", err)
	}
	d.lastExit = h
	return h.GaveUp
}

// giveUp ends a driver whose harness keeps exiting before it comes up: the
// waiting start (if any) gets the harness's words, the loop exits 1, and the
// dead pane is left for a person to inspect.
func (d *Driver) giveUp() {
	err := fmt.Errorf("the harness exited %d times in a row before it came up (last: %s); its last words: %s",
		d.launchFailures, d.lastExit.Why, d.lastExit.Words())
	d.logf("giving up: %v", err)
	d.to(machine.GaveUp, "gave up: "+err.Error())
	d.report(Progress{State: "error", Text: err.Error()})
	code := 1
	d.exit = &code
}
