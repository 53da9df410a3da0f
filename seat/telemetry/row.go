// Package telemetry derives a seat's readings from what was recorded — the
// driver's state files, the harness's own hook events and status line, and
// recover's verdicts — never from what seat.toml declares. It reads files only:
// no model turn, no lock, no process, no tmux call. A missing record is
// `unknown` and an old one `stale`, never 0 or idle; every reading names how it
// was bound to its seat. docs/telemetry.md documents the JSON form field by field.
package telemetry

import (
	"strings"
	"time"

	"github.com/pantty/pantty/internal/machine"
)

// Version is the JSON document's schema version. Fields are only ever added
// within a version; a rename or a change of meaning bumps it.
const Version = 1

// Reading states. Every reading carries exactly one.
const (
	Known   = "known"   // recorded and current
	Stale   = "stale"   // recorded, but older than what it describes (Why says against what)
	Unknown = "unknown" // no record: the values are null, Why says which record is missing
	Error   = "error"   // a record exists but could not be read (Why holds the error)
)

// Meta is what every reading carries beside its values: its state, why it is in
// that state, how it was bound to this seat, and when it was recorded.
type Meta struct {
	State string `json:"state"`
	// Why explains an unknown, stale or error state (and, for a health verdict,
	// recover's reason); empty for a plain known reading.
	Why string `json:"why"`
	// Bound names the record and the identifier that tie the value to this seat,
	// e.g. `context.toml session_id matches session.toml id`.
	Bound string `json:"bound"`
	// At is when the record was made; null when unknown.
	At *time.Time `json:"at"`
	// AgeSeconds is now − At when At is known.
	AgeSeconds *float64 `json:"age_seconds"`
}

// IsKnown reports whether the reading holds a value (known or stale).
func (m Meta) IsKnown() bool { return m.State == Known || m.State == Stale }

// Document is the JSON form of `pantty status --json`.
type Document struct {
	Version int       `json:"version"`
	At      time.Time `json:"at"`   // when the readings were taken
	Home    string    `json:"home"` // the state root read
	Seats   []Row     `json:"seats"`
	// LastSweep is recover's last sweep of the state root (ReadSweep); null
	// before the first.
	LastSweep *Sweep `json:"last_sweep"`
}

// Row is every reading of one seat.
type Row struct {
	Seat          string     `json:"seat"`
	Harness       Text       `json:"harness"`
	Shape         Text       `json:"shape"`
	Transport     Text       `json:"transport"`
	Intent        Text       `json:"intent"`
	Health        Health     `json:"health"`
	Heartbeat     Heartbeat  `json:"heartbeat"`
	Driver        Driver     `json:"driver"`
	Session       Session    `json:"session"`
	Model         Text       `json:"model"`
	Context       Context    `json:"context"`
	Inbox         Inbox      `json:"inbox"`
	InFlight      InFlight   `json:"in_flight"`
	Cursor        Cursor     `json:"cursor"`
	LastTurnEnd   Meta       `json:"last_turn_end"`
	Ladder        Ladder     `json:"ladder"`
	ProviderWaits Waits      `json:"provider_waits"`
	Compaction    Compaction `json:"compaction"`
	Mode          Text       `json:"mode"`
	Activity      Activity   `json:"activity"`
	Done          Done       `json:"done"`
	LastExit      Text       `json:"last_exit"`
	// Isolation is whether the harness's OS sandbox held the model's shell at
	// the last launch: on, off or unavailable (authority.toml).
	Isolation Text `json:"isolation"`
}

// Done is the finalizer's marker (cleanup.toml): a `seat done` whose teardown
// recover has not finished. Its absence is a known "nothing pending", because
// the marker's existence is the whole queue.
type Done struct {
	Meta
	Pending   *bool   `json:"pending"`
	Attempts  *int    `json:"attempts"`   // recover sweeps that tried and failed
	LastError *string `json:"last_error"` // why the last one failed
}

// Activity is the seat's current tool call (activity.toml), shown only within
// state.ActivityQuiet of its last event.
type Activity struct {
	Meta
	Tool  *string `json:"tool"`
	What  *string `json:"what"`
	Phase *string `json:"phase"`
}

// Text is a reading whose value is one string.
type Text struct {
	Meta
	Value *string `json:"value"`
}

// Health is recover's last verdict on the seat.
type Health struct {
	Meta
	Verdict *string `json:"verdict"` // ok, dead or unknown (recover could not observe)
	// revived: the verdict is dead and the same sweep revived the seat and
	// verified it (health.toml's result); the listings say "revived".
	revived bool
}

// Heartbeat is heartbeat.toml: the driver loop's last beat.
type Heartbeat struct {
	Meta
	Phase           *string  `json:"phase"`
	Waiting         *string  `json:"waiting"` // what a waiting phase waits for
	IntervalSeconds *float64 `json:"interval_seconds"`
	PID             *int     `json:"pid"`
	Holder          *string  `json:"holder"`
	// Fault is the class of an outage the driver holds its queue for (means,
	// transient), FaultCause its cause in the harness's words, FaultSince when
	// it began; null when there is none. They stay while the held message is
	// tried again, when the phase itself no longer says it.
	Fault      *machine.Class `json:"fault"`
	FaultCause *string        `json:"fault_cause"`
	FaultSince *time.Time     `json:"fault_since"`
}

// PhaseText is the phase as the listings print it: the phase, what it waits
// for, and an outage the phase does not already name (a held message being
// tried again is "submitting", but the seat is still in its outage).
func (h Heartbeat) PhaseText() string {
	if h.Phase == nil {
		return ""
	}
	p := *h.Phase
	if h.Waiting != nil {
		p += " (" + *h.Waiting + ")"
	}
	if h.Fault != nil && h.FaultCause != nil && (h.Waiting == nil || !strings.Contains(*h.Waiting, *h.FaultCause)) {
		p += "; " + string(*h.Fault) + " outage: " + *h.FaultCause
	}
	return p
}

// Driver is the recorded holder of owner.lock and whether it is live.
type Driver struct {
	Meta
	Live    *bool      `json:"live"`
	Holder  *string    `json:"holder"`
	PID     *int       `json:"pid"`
	Host    *string    `json:"host"`
	Started *time.Time `json:"started"`
}

// Session is session.toml: the harness session the seat is bound to.
type Session struct {
	Meta
	ID         *string `json:"id"`
	Harness    *string `json:"harness"`
	Generation *int    `json:"generation"`
	// GenerationWhy is why this generation began.
	GenerationWhy *string    `json:"generation_why"`
	Launches      *int       `json:"launches"`
	LaunchedAt    *time.Time `json:"launched_at"`
	Resumed       *bool      `json:"resumed"`
	// ConfirmedBy is the harness hook event that carried the same session id.
	ConfirmedBy *string `json:"confirmed_by"`
}

// Context is the latest context reading, decomposed into the fixed floor and
// the reclaimable part.
type Context struct {
	Meta
	Occupancy   *int     `json:"occupancy"`
	Floor       *int     `json:"floor"`       // null until measured
	Reclaimable *int     `json:"reclaimable"` // null until the floor is measured
	Window      *int     `json:"window"`
	Percent     *float64 `json:"percent"` // occupancy / window × 100
	// Step is Percent quantized down to 5 % of the window: watch compares it.
	Step        *int       `json:"step"`
	Source      *string    `json:"source"`
	FloorSource *string    `json:"floor_source"`
	LastTurnEnd *time.Time `json:"last_turn_end"` // the turn end the reading was judged against
}

// Inbox counts the stored messages by state.
type Inbox struct {
	Meta
	Depth     *int `json:"depth"` // non-final messages (queued, submitting, submitted)
	Queued    *int `json:"queued"`
	Failed    *int `json:"failed"`
	Processed *int `json:"processed"`
	// ProcessedTotal and FailedTotal (by reason) count what the inbox has
	// finished ever, pruned messages included: counters that never drop.
	ProcessedTotal *int           `json:"processed_total"`
	FailedTotal    map[string]int `json:"failed_total"`
	// OldestQueuedSeconds is how long the oldest queued message has waited;
	// OldestQueuedAt is when it was enqueued (a time does not freeze in a
	// textfile the way an age does).
	OldestQueuedSeconds *float64   `json:"oldest_queued_seconds"`
	OldestQueuedAt      *time.Time `json:"oldest_queued_at"`
	// Mentions is the '@' mention count (guard.MentionCount: what the harness
	// will expand) summed over the non-final messages: files board text is
	// about to pull into the model's context.
	Mentions *int `json:"mentions"`
}

// InFlight is the message between paste and turn end, if any. Known with a
// null ID means "nothing in flight".
type InFlight struct {
	Meta
	ID           *string `json:"id"`
	MessageState *string `json:"message_state"` // submitting or submitted
	Attempts     *int    `json:"attempts"`
	Mentions     *int    `json:"mentions"` // guard.MentionCount of its text
}

// Cursor is cursor.toml: the prefix in which every message is final.
type Cursor struct {
	Meta
	ID           *string `json:"id"`
	MessageState *string `json:"message_state"`
	Closed       *int    `json:"closed"`
	ClosedBy     *string `json:"closed_by"`
}

// Ladder is the seat's place on its means ladder: the rung its pane was last
// launched on (launch.toml) and the demotion floor recover persisted.
type Ladder struct {
	Meta
	// Rung is the rung the pane was last launched on; "" when the seat has no
	// [[ladder]] (its one rung is seat.toml's top level).
	Rung *string `json:"rung"`
	// Floor is recovery.toml's demotion floor ("" = the top rung); null without
	// recovery.toml (recover never had to act on the seat).
	Floor         *string    `json:"floor"`
	FloorWhy      *string    `json:"floor_why"`
	MeansFailures *int       `json:"means_failures"`
	Revived       *int       `json:"revived"` // verified recoveries, ever (a counter)
	Failures      *int       `json:"failures"`
	NextAttempt   *time.Time `json:"next_attempt"` // recover's backoff: no recovery before this
}

// Waits are the provider waits that hold this seat.
type Waits struct {
	Meta
	Waits []Wait `json:"waits"` // null when unknown; [] when known to be none
}

// Wait is one provider block with its end time.
type Wait struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
	Reason   string    `json:"reason"`
	Bound    string    `json:"bound"`
}

// Compaction is handoff/cycle.toml: the last compaction cycle.
type Compaction struct {
	Meta
	ID         *string    `json:"id"`
	CycleState *string    `json:"cycle_state"` // requested, done, failed
	Reason     *string    `json:"reason"`
	Requested  *time.Time `json:"requested"`
	Ended      *time.Time `json:"ended"`
	Before     *int       `json:"context_before"` // null when not measured
	After      *int       `json:"context_after"`  // null when not measured yet
	Error      *string    `json:"error"`
}

func ptr[T any](v T) *T { return &v }
