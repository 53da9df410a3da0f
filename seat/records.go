package seat

import (
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
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
	// transient; seat.ClassifyFailure), FaultCause its cause in the harness's
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

// RefreshDecision is artifacts/refresh-<ns>.toml: one decision of the refresh
// policy ("refresh" or "send" the next message) with the numbers it used.
type RefreshDecision struct {
	Policy      string    `toml:"policy"`
	Decision    string    `toml:"decision"` // refresh, send
	Reason      string    `toml:"reason"`
	Next        string    `toml:"next"` // the message waiting to be sent
	Processed   int       `toml:"processed_since_refresh"`
	Every       int       `toml:"every,omitempty"`
	Reclaimable int       `toml:"reclaimable,omitempty"`
	Floor       int       `toml:"floor,omitempty"`
	Window      int       `toml:"window,omitempty"`
	Estimate    int       `toml:"next_estimate_tokens,omitempty"`
	Pressure    float64   `toml:"pressure_with_next,omitempty"`
	Threshold   float64   `toml:"threshold,omitempty"`
	StaleRead   bool      `toml:"stale_reading,omitempty"`
	At          time.Time `toml:"at"`
}

// Artifact is artifacts/<id>.<attempt>.toml: what one delivery really sent.
type Artifact struct {
	ID       string    `toml:"id"`
	Attempt  int       `toml:"attempt"`
	Resubmit int       `toml:"resubmit"`
	Nonce    string    `toml:"nonce"`
	Header   string    `toml:"header"`
	SHA256   string    `toml:"sha256"`
	Bytes    int       `toml:"bytes"`
	Mentions int       `toml:"mentions"`
	SentAt   time.Time `toml:"sent_at"`
	Text     string    `toml:"text"`
}

// LastSweep is $PANTTY_HOME/recover-last.toml, written by recover: the last
// sweep that ran (not a dry run). `recover check` requires it to be younger
// than two intervals; telemetry dates a verdict by its interval and exports its
// figures.
type LastSweep struct {
	At       time.Time       `toml:"at"`
	Took     config.Duration `toml:"took"`
	PID      int             `toml:"pid"`
	Interval config.Duration `toml:"interval"`
	Seats    int             `toml:"seats"`
	OK       int             `toml:"ok"`
	Dead     int             `toml:"dead"`
	Unknown  int             `toml:"unknown"`
	Revived  int             `toml:"revived"`
	Code     int             `toml:"exit_code"`
}
