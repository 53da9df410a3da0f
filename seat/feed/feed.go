// Package feed derives the event stream `pantty events` prints — message state
// changes, seat mode and intent changes, recover's health verdicts — from the
// seats' records alone. Nothing writes an event log: every event is a fact a
// record already holds with its time (a message's enqueued_at, submitted_at,
// ended_at; mode.toml's since; intent.toml's at), so the same records always
// give the same events, and a caller resumes from a cursor it keeps.
package feed

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// Version is the "v" of every event line; it changes only when a field changes
// meaning or goes away (fields may be added within a version).
const Version = 1

// Event types.
const (
	TypeMessage = "message" // a message reached a state
	TypeMode    = "mode"    // the seat switched direct/relay
	TypeIntent  = "intent"  // start or stop recorded what the person wants
	TypeHealth  = "health"  // recover's verdict (a state, not a transition: see Health)
)

// StateResubmitted is the message event for pantty's one marked resubmission of
// a message whose turn was lost; it is not a status state.
const StateResubmitted = "resubmitted"

// Event is one line of `pantty events`, schema v1 (docs/cli.md).
type Event struct {
	V      int       `json:"v"`
	Cursor string    `json:"cursor,omitempty"` // resume after this line with --since CURSOR; health lines have none
	At     time.Time `json:"at"`
	Seat   string    `json:"seat"`
	Type   string    `json:"type"`
	// message
	ID     string `json:"id,omitempty"`
	From   string `json:"from,omitempty"`
	State  string `json:"state,omitempty"` // queued, submitted, resubmitted, processed, failed
	Epoch  string `json:"epoch,omitempty"` // RETRIES.RESUBMITS: which try of the message this state belongs to
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// mode, intent, health
	Mode     string `json:"mode,omitempty"`
	Want     string `json:"want,omitempty"`
	By       string `json:"by,omitempty"`
	Why      string `json:"why,omitempty"`
	Verdict  string `json:"verdict,omitempty"`
	Cause    string `json:"cause,omitempty"`
	Snapshot bool   `json:"snapshot,omitempty"` // a health line printed at start: the current verdict, not a change
	// Late marks an event that became visible after the settle time, behind
	// lines already printed: a resume from an earlier cursor would not show it.
	Late bool `json:"late,omitempty"`

	key string
}

// Cursor is a position in the stream: events are ordered by their time and
// then their key (seat/id/state/epoch), and a cursor names the last event
// taken. Its text form is "<unix ns>/<key>".
type Cursor struct {
	NS  int64
	Key string
}

func (c Cursor) String() string { return strconv.FormatInt(c.NS, 10) + "/" + c.Key }

// After reports whether e comes after c in the stream.
func (c Cursor) After(e Event) bool {
	ns := e.At.UnixNano()
	return ns > c.NS || ns == c.NS && e.key > c.Key
}

func cursorOf(e Event) Cursor { return Cursor{e.At.UnixNano(), e.key} }

// ParseSince reads --since: a cursor from an event line, an RFC 3339 time or a
// duration back from now (the events at or after it), or "now".
func ParseSince(s string, now time.Time) (Cursor, error) {
	if s == "now" {
		return Cursor{NS: now.UnixNano(), Key: "\xff"}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Cursor{NS: t.UnixNano() - 1, Key: "\xff"}, nil
	}
	// A duration is "that long ago", as journalctl, kubectl and docker take it.
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return Cursor{}, fmt.Errorf("%w: --since %q: a duration counts back from now and cannot be negative", state.ErrBadInput, s)
		}
		return Cursor{NS: now.Add(-d).UnixNano() - 1, Key: "\xff"}, nil
	}
	ns, key, ok := strings.Cut(s, "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || key == "" {
		return Cursor{}, fmt.Errorf("%w: --since %q: want a cursor from an event line (NS/KEY), an RFC 3339 time, a duration (5m, 2h) or now", state.ErrBadInput, s)
	}
	return Cursor{NS: n, Key: key}, nil
}

// MessageEvents derives the events of one message from its records: queued
// (msgs file), and for its current try (epoch) resubmitted (the marked
// resubmission's paste, artifacts/), submitted (the evidence's time) and the
// final state (ended_at). A retry starts a new epoch; the records keep only
// the current one, so a replay shows an earlier try's submitted and final
// states no more (a follower that was running saw them).
func MessageEvents(s state.Seat, m inbox.Stored, st inbox.Status) []Event {
	epoch := fmt.Sprintf("%d.%d", st.Retries, st.Resubmits)
	ev := func(at time.Time, state, ep string) Event {
		return Event{V: Version, At: at.UTC(), Seat: s.Name, Type: TypeMessage, ID: m.ID, From: m.From, State: state, Epoch: ep,
			key: s.Name + "/" + m.ID + "/" + state + "/" + ep}
	}
	out := []Event{ev(m.EnqueuedAt, inbox.StateQueued, "0.0")}
	// Evidence belongs to the current epoch when it is newer than the epoch's
	// start: a retry clears the evidence; a resubmission keeps the earlier one
	// until new evidence binds, so until its paste is recorded nothing counts.
	var from time.Time
	current := true
	if st.Resubmits > 0 {
		at, ok := resubmittedAt(s, m.ID)
		if ok {
			out = append(out, ev(at, StateResubmitted, epoch))
		}
		from, current = at, ok
	}
	if current && st.Evidence != "" && !st.SubmittedAt.IsZero() && st.SubmittedAt.After(from) && st.State != inbox.StateQueued {
		out = append(out, ev(st.SubmittedAt, inbox.StateSubmitted, epoch))
	}
	if inbox.Final(st.State) && !st.EndedAt.IsZero() {
		e := ev(st.EndedAt, st.State, epoch)
		e.Reason, e.Detail = st.Reason, st.Detail
		out = append(out, e)
	}
	return out
}

// resubmittedAt is when the marked resubmission was pasted (its artifact).
func resubmittedAt(s state.Seat, id string) (time.Time, bool) {
	var at time.Time
	for _, f := range s.ArtifactFiles(id) {
		if a, err := f.Read(); err == nil && a.ID == id && a.Resubmit > 0 && (at.IsZero() || a.SentAt.Before(at)) {
			at = a.SentAt
		}
	}
	return at, !at.IsZero()
}

// SeatEvents derives a seat's mode and intent events: each record keeps the
// time of its last change, so each change is one event with a stable time.
func SeatEvents(s state.Seat) []Event {
	var out []Event
	if m, err := s.ModeFile().Read(); err == nil && !m.Since.IsZero() {
		out = append(out, Event{V: Version, At: m.Since.UTC(), Seat: s.Name, Type: TypeMode, Mode: m.Mode, Why: m.Why,
			key: s.Name + "/-/mode/" + m.Mode})
	}
	if in, err := s.IntentFile().Read(); err == nil && !in.At.IsZero() {
		out = append(out, Event{V: Version, At: in.At.UTC(), Seat: s.Name, Type: TypeIntent, Want: in.Want, By: in.By,
			key: s.Name + "/-/intent/" + in.Want})
	}
	return out
}

// Health is recover's current verdict of a seat. health.toml is rewritten by
// every sweep, so its time is the last sweep's, not the change's: health lines
// are printed as a snapshot at start and then when the verdict or its cause
// changes, and carry no cursor. ok is false when there is no verdict yet.
func Health(s state.Seat) (Event, bool, error) {
	h, err := state.ReadHealth(s)
	if errors.Is(err, fs.ErrNotExist) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	return Event{V: Version, At: h.At.UTC(), Seat: s.Name, Type: TypeHealth, Verdict: h.Verdict, Cause: h.Cause, Why: h.Reason}, true, nil
}

// healthKey is what makes a health line a change.
func healthKey(e Event) string { return e.Verdict + "/" + e.Cause }

// SeatScan derives every cursor-ordered event of one seat.
func SeatScan(s state.Seat) ([]Event, error) {
	es, err := s.Entries()
	if err != nil {
		return nil, fmt.Errorf("%w: seat %q: %v", state.ErrUnobservable, s.Name, err)
	}
	out := SeatEvents(s)
	for _, e := range es {
		out = append(out, MessageEvents(s, e.Msg, e.Status)...)
	}
	return out, nil
}

// Sort orders events as the stream does: by time, then key.
func Sort(es []Event) {
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i].At.UnixNano(), es[j].At.UnixNano()
		if a != b {
			return a < b
		}
		return es[i].key < es[j].key
	})
}
