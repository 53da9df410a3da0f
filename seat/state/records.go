package state

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/internal/statedir"
)

// Session is session.toml: which harness session the seat is, and where it runs.
// Recovery never changes Generation; only an explicit recycle, a step, or a
// ladder rung change starts a new one, and records why.
type Session struct {
	Harness    string    `toml:"harness"`
	ID         string    `toml:"id"`         // the harness's session id (chosen by pantty for Claude Code)
	Generation int       `toml:"generation"` // increments only on recycle/step/rung change
	Why        string    `toml:"why"`        // why this generation began
	Socket     string    `toml:"socket"`     // absolute tmux socket path (cron's TMUX_TMPDIR may differ)
	TmuxName   string    `toml:"tmux_session"`
	PaneID     string    `toml:"pane_id"`
	PanePID    int       `toml:"pane_pid"`
	Launches   int       `toml:"launches"` // how many times the harness process was (re)launched
	LaunchedAt time.Time `toml:"launched_at"`
	Resumed    bool      `toml:"resumed"` // the last launch resumed an existing harness session
	// Transport is the path the driver runs the harness on (seat.toml's
	// transport, or what transport = "auto" resolved to at the driver's
	// start); TransportWhy is auto's reason, "" when it was declared.
	Transport    string `toml:"transport,omitempty"`
	TransportWhy string `toml:"transport_why,omitempty"`
}

// TransportLabel says the path a seat of cfg runs on for a reader (status's
// TRANSPORT, seat show): seat.toml's transport, or for transport = "auto"
// the path its driver chose, "app-server (auto)", and "auto" before a driver
// recorded a choice.
func TransportLabel(cfg config.Config, sess Session) string {
	switch {
	case cfg.Transport != config.TransportAuto:
		return cmp.Or(cfg.Transport, config.TransportTmux)
	case sess.Transport == "":
		return config.TransportAuto
	}
	return sess.Transport + " (auto)"
}

// RunsOn is the transport a seat of cfg runs on, given its session record:
// seat.toml's, or for transport = "auto" the one its driver chose at its
// last start (tmux before one recorded a choice: auto never runs unresolved,
// and tmux is what an unresolved seat is driven as).
func RunsOn(cfg config.Config, sess Session) string {
	if cfg.Transport != config.TransportAuto {
		return cmp.Or(cfg.Transport, config.TransportTmux)
	}
	return cmp.Or(sess.Transport, config.TransportTmux)
}

// Intent values: what the person wants, recorded by start and stop. recover acts
// only on seats meant to run.
const (
	IntentRunning = "running"
	IntentStopped = "stopped"
)

// Intent is intent.toml.
type Intent struct {
	Want string    `toml:"want"`
	At   time.Time `toml:"at"`
	By   string    `toml:"by"` // the command that recorded it
}

// SetIntent records the person's intent.
func (s Seat) SetIntent(want, by string) error {
	return s.IntentFile().Write(Intent{Want: want, At: time.Now().UTC(), By: by})
}

// Heartbeat is written only by the driver's work loop, on each tick of the
// interval it declares and on each phase change; a reader judges it stale
// against that Interval, not against a constant of its own.
type Heartbeat struct {
	At       time.Time       `toml:"at"`
	Phase    string          `toml:"phase"` // starting, idle, submitting, in-turn, cancelling, waiting-provider, waiting-means, waiting-retry, relaunching, held, stopping
	Interval config.Duration `toml:"interval"`
	PID      int             `toml:"pid"`
	Holder   string          `toml:"holder"`
	Waiting  string          `toml:"waiting,omitempty"` // what a waiting phase waits for
	// Fault is the class of an outage the driver holds its queue for (means,
	// transient; hookwire.ClassifyFailure), FaultCause its cause in the harness's
	// words, FaultSince its first sighting. recover reports a means fault as a
	// dead seat (cause no-model-access).
	Fault      machine.Class `toml:"fault,omitempty"`
	FaultCause string        `toml:"fault_cause,omitempty"`
	FaultSince time.Time     `toml:"fault_since,omitempty"`
}

// Stale reports whether the heartbeat is older than twice its declared interval.
func (h Heartbeat) Stale(now time.Time) bool {
	return now.Sub(h.At) > 2*h.Interval.Duration
}

// Driver phases as heartbeat.toml records them; internal/machine names them
// and the events between them.
const (
	PhaseStarting    = string(machine.Starting)
	PhaseIdle        = string(machine.Idle)
	PhaseSubmitting  = string(machine.Submitting)
	PhaseInTurn      = string(machine.InTurn)
	PhaseCancelling  = string(machine.Cancelling)
	PhaseCompacting  = string(machine.Compacting)
	PhaseRelay       = string(machine.Relay)
	PhaseProvider    = string(machine.Provider)
	PhaseMeans       = string(machine.Means)
	PhaseRetry       = string(machine.Retry)
	PhaseRelaunching = string(machine.Relaunching)
	PhaseStopping    = string(machine.Stopping)
	PhaseHeld        = string(machine.Held)
)

// NewSessionID makes a random (version 4) UUID: pantty chooses the harness session
// id before the first launch so it can resume that exact session later.
func NewSessionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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

// Hold says, in one line, why the seat's queue is not moving now, or "" when
// nothing holds it: a stopped seat, no live driver, a state root the driver
// cannot write, or a phase the driver itself reports as a wait (a provider's
// refusal, a means outage, a dialog or a draft on the pane, relay …, named
// in the heartbeat's waiting). It reads only records (and, for a stale
// heartbeat, probes a write), so a script blocked in `send --wait` can be
// told what it waits for without asking the driver anything.
func (s Seat) Hold(now time.Time) string {
	if in, err := s.IntentFile().Read(); err == nil && in.Want == IntentStopped {
		return fmt.Sprintf("the seat is stopped; queued messages wait for a start: pantty seat start %s", s.Name)
	}
	if _, live, err := s.LiveOwner(); err == nil && !live {
		return fmt.Sprintf("no live driver runs; queued messages wait for one: pantty seat start %s", s.Name)
	}
	hb, err := s.HeartbeatFile().Read()
	if err != nil {
		return ""
	}
	if hb.Stale(now) {
		if werr := s.StateUnwritable(); werr != nil {
			return "state not writable: " + werr.Error()
		}
		return fmt.Sprintf("the driver's heartbeat is %s old (interval %s)", now.Sub(hb.At).Round(time.Second), hb.Interval.Duration)
	}
	switch hb.Phase {
	case PhaseSubmitting, PhaseInTurn, PhaseStarting, PhaseCompacting, PhaseCancelling:
		return "" // work goes on (in-turn's waiting names the message)
	case PhaseIdle:
		if hb.Waiting == "" {
			return ""
		}
	}
	if hb.Waiting == "" {
		return hb.Phase
	}
	if hb.Phase == PhaseHeld {
		// The waiting says what holds it; `send --wait` prints "is held: "
		// before it, and a stale heartbeat over an unwritable root words it
		// the same way (above).
		return hb.Waiting
	}
	return hb.Phase + ": " + hb.Waiting
}

// SessionFile is session.toml: the harness session the seat is bound to (its id, pane, launches).
func (s Seat) SessionFile() statedir.File[Session] { return bind[Session](s, s.SessionPath()) }

// IntentFile is intent.toml: what the person wants (running or stopped); recover acts only on seats meant to run.
func (s Seat) IntentFile() statedir.File[Intent] { return bind[Intent](s, s.IntentPath()) }

// HeartbeatFile is heartbeat.toml: the driver's phase and liveness, written on each tick and phase change.
func (s Seat) HeartbeatFile() statedir.File[Heartbeat] { return bind[Heartbeat](s, s.HeartbeatPath()) }

// CursorFile is cursor.toml: the last message closed in queue order and how many are closed.
func (s Seat) CursorFile() statedir.File[inbox.Cursor] { return bind[inbox.Cursor](s, s.CursorPath()) }

// ModeFile is mode.toml: direct or relay. A seat that never had a person at it has none (direct is then the driver's state, and readers say unknown).
func (s Seat) ModeFile() statedir.File[Mode] { return bind[Mode](s, s.ModePath()) }

func (s Seat) SessionPath() string { return s.path("session.toml") }

func (s Seat) IntentPath() string { return s.path("intent.toml") }

func (s Seat) CursorPath() string { return s.path("cursor.toml") }

func (s Seat) HeartbeatPath() string { return s.path("heartbeat.toml") }
