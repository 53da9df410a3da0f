package seat

import (
	"strings"
	"time"
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
