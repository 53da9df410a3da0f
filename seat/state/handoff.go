package state

import (
	"fmt"
	"time"

	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/statedir"
)

// Handoff is the seat's handoff store, writing through the one atomic writer.
func (s Seat) Handoff() handoff.Store {
	return handoff.Store{Dir: s.HandoffDir(), Write: s.WriteRaw}
}

// maxPendingInNote bounds the pending list a handoff carries.
const maxPendingInNote = 50

// BuildNote assembles pantty's resume pointers (session, cursor, in-flight and
// pending messages, last outcomes) from the state files, plus the seat's own
// procedure notes. It reads only; the hook process and the driver both use it.
func (s Seat) BuildNote(reason string, now time.Time) (handoff.Note, error) {
	n := handoff.Note{Seat: s.Name, Reason: reason, At: now}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return n, fmt.Errorf("handoff: %w", err)
	}
	n.Session, n.Generation = sess.ID, sess.Generation
	v, err := s.View()
	if err != nil {
		return n, fmt.Errorf("handoff: %w", err)
	}
	if c, err := s.CursorFile().Read(); err == nil {
		n.Cursor = fmt.Sprintf("%s (%s; %d closed)", c.ID, c.State, c.Closed)
	}
	for _, e := range v.Open {
		switch {
		case e.Status.State == inbox.StateSubmitting || e.Status.State == inbox.StateSubmitted:
			n.InFlight = e.Msg.ID
		case e.Status.State == inbox.StateQueued:
			if len(n.Pending) < maxPendingInNote {
				n.Pending = append(n.Pending, e.Msg.ID)
			}
		}
	}
	// The last five outcomes: the final statuses written last, oldest first.
	refs := v.Final[max(0, len(v.Final)-5):]
	for _, r := range refs {
		e, ok := s.ReadFinal(v, r)
		if !ok {
			continue
		}
		o := fmt.Sprintf("%s: %s", e.Msg.ID, e.Status.State)
		if e.Status.Reason != "" {
			o += " (" + e.Status.Reason + ")"
		}
		n.LastOutcomes = append(n.LastOutcomes, o)
	}
	notes, _, err := s.Handoff().Notes()
	if err != nil {
		return n, fmt.Errorf("handoff notes: %w", err)
	}
	n.Procedure = notes
	return n, nil
}

// Cycle is handoff/cycle.toml: the compaction cycle pantty started, so the
// PreCompact hook can tell pantty's own boundary (already materialized) from
// one it did not choose (auto-compaction, a person's /compact), which it must
// materialize itself.
type Cycle struct {
	ID           string    `toml:"id"`
	State        string    `toml:"state"` // requested, done, failed
	Reason       string    `toml:"reason"`
	Hash         string    `toml:"hash"`    // of the handoff materialized before /compact
	Handoff      string    `toml:"handoff"` // its numbered file
	Requested    time.Time `toml:"requested"`
	PreCompact   string    `toml:"pre_compact,omitempty"`   // event file
	Injected     string    `toml:"injected,omitempty"`      // SessionStart(compact) event file
	InjectedHash string    `toml:"injected_hash,omitempty"` // what the hook printed
	PostCompact  string    `toml:"post_compact,omitempty"`  // event file
	Before       int       `toml:"context_before"`          // occupancy before, tokens (0 = unknown)
	After        int       `toml:"context_after"`           // occupancy after, tokens (0 = unknown yet)
	Error        string    `toml:"error,omitempty"`
	Ended        time.Time `toml:"ended,omitempty"`
}

// CyclePath is handoff/cycle.toml: the compaction cycle under way or last run.
func (s Seat) CyclePath() string { return s.path("handoff", "cycle.toml") }

// CycleFresh bounds how long a requested cycle vouches for a PreCompact.
const CycleFresh = 10 * time.Minute

// ValidateNote refuses a procedure note that is not clean text: it will be
// re-injected into the seat's context, so it follows the board text rules for
// bytes (no control bytes but newline and tab, valid UTF-8, no NUL).
func ValidateNote(text string) error {
	if err := guard.ValidateMessage(guard.Message{Text: text, ID: "note"}, guard.DefaultMaxMessageBytes); err != nil {
		return fmt.Errorf("note: %w", err)
	}
	return nil
}

// Inject is handoff/inject.toml: the session whose start must be given the
// current handoff (a step's fresh session). The SessionStart hook reads it.
type Inject struct {
	SessionID string    `toml:"session_id"`
	Hash      string    `toml:"hash"`
	Why       string    `toml:"why"`
	At        time.Time `toml:"at"`
}

// InjectPath is handoff/inject.toml: what the next session start injects.
func (s Seat) InjectPath() string { return s.path("handoff", "inject.toml") }

// CycleFile is handoff/cycle.toml: the compaction cycle under way or last run.
func (s Seat) CycleFile() statedir.File[Cycle] { return bind[Cycle](s, s.CyclePath()) }

// InjectFile is handoff/inject.toml: the session whose start must be given the current handoff.
func (s Seat) InjectFile() statedir.File[Inject] { return bind[Inject](s, s.InjectPath()) }

// CompactRecordFile is artifacts/compact-<cycle>.toml: one compaction cycle's
// record, kept after handoff/cycle.toml moves on to the next.
func (s Seat) CompactRecordFile(cycle string) statedir.File[Cycle] {
	return bind[Cycle](s, s.path("artifacts", "compact-"+cycle+".toml"))
}
