package seat

import (
	"time"
)

// Seat modes: who owns the pane's input.
const (
	ModeDirect = "direct" // the driver submits board work
	ModeRelay  = "relay"  // a person owns the input; the driver submits nothing and queues
	// ModeDialog and ModeDraft: no person is attached, but the pane needs
	// one — a dialog stands where the harness's input box should be, or a
	// person's draft is in the box. The driver sends no key and queues until
	// the box is back and empty; why names the dialog, Draft keeps the draft.
	ModeDialog = "dialog"
	ModeDraft  = "draft"
)

// Mode is mode.toml: the seat's current mode, latest wins. It is switched only
// by what the driver observes from tmux (a client that can type attached to the
// seat's session), by `pantty seat attach`, or by `pantty seat relay --off`.
type Mode struct {
	Mode    string    `toml:"mode"`
	Since   time.Time `toml:"since"`
	Why     string    `toml:"why"`
	Clients []string  `toml:"clients,omitempty"` // the typing clients seen (tty pid)
	Draft   string    `toml:"draft,omitempty"`   // a draft left in the input box that holds the queue
}

// ModePath is mode.toml: whether the driver feeds the pane (direct) or a
// person has it (relay).
func (s Seat) ModePath() string { return s.path("mode.toml") }
