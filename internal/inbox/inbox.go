// Package inbox is a seat's inbox: the board messages a seat accepted and
// the state of each, kept the way a maildir keeps mail — every message
// written once under msgs/ (which is also the id registry that refuses a
// duplicate), and its status in the directory that is its state (status/
// while open, processed/ or failed/ once final). Readers learn what is open
// and how much is done from directory listings and decode only what is open.
// It knows files, not the driver: the seat's driver is the one writer of
// statuses, `seat send` the one writer of messages (docs/state.md, "The
// inbox").
package inbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
)

// Stored is one accepted board message as it sits in inbox/msgs/<id>.json. It is
// written once (no-replace link) and never changed; its state lives in one of
// the status directories (dirs.go), so a duplicate send
// is refused whatever that state is.
type Stored struct {
	ID         string    `json:"id"`
	From       string    `json:"from,omitempty"`
	Board      string    `json:"board,omitempty"`
	Channel    string    `json:"channel,omitempty"`
	Text       string    `json:"text"`
	Seq        int64     `json:"seq"` // enqueue time in ns: the queue order
	EnqueuedAt time.Time `json:"enqueued_at"`
}

// Message returns the board message for the guard.
func (m Stored) Message() guard.Message {
	return guard.Message{ID: m.ID, From: m.From, Board: m.Board, Channel: m.Channel, Text: m.Text}
}

// Message states (docs/intake.md, "Delivery, evidence and the cursor"): every message ends in exactly one visible state.
const (
	StateQueued     = "queued"
	StateSubmitting = "submitting" // pasted, no evidence yet
	StateSubmitted  = "submitted"  // UserPromptSubmit evidence bound to it
	StateProcessed  = "processed"  // its turn end is recorded
	StateFailed     = "failed"
)

// Failure reasons recorded on a failed message.
const (
	ReasonCancelled   = "cancelled"
	ReasonCeiling     = "ceiling"
	ReasonWorkError   = "work-error"
	ReasonLost        = "resubmitted-and-lost"
	ReasonUndelivered = "undelivered"
	ReasonUnsafe      = "refused-by-guard"
	// ReasonUnreadable: the message file or its status file could not be read
	// (a symlink, a FIFO, over its size limit, not the JSON pantty writes).
	// The entry is set aside as failed so the rest of the queue runs.
	ReasonUnreadable = "unreadable"
	// ReasonDropped: withdrawn while queued, before any delivery, by
	// `pantty seat drop`; 'pantty seat retry' queues it again.
	ReasonDropped = "dropped"
)

// Final reports whether a state is one the cursor may pass.
func Final(state string) bool { return state == StateProcessed || state == StateFailed }

// Status is a message's status file — inbox/status/<id>.toml while it is
// open, inbox/processed/ or inbox/failed/ once final — written only by the
// driver (or by retry on a seat with no driver). A message without a status
// file is queued.
type Status struct {
	ID          string    `toml:"id"`
	State       string    `toml:"state"`
	Reason      string    `toml:"reason,omitempty"`
	Detail      string    `toml:"detail,omitempty"`
	Attempts    int       `toml:"attempts"`             // deliveries pasted
	Resubmits   int       `toml:"resubmits"`            // marked resubmissions after a lost turn (at most 1)
	Retries     int       `toml:"retries"`              // re-queued by 'seat retry'
	Transients  int       `toml:"transients,omitempty"` // turns failed by the provider (5xx, overloaded) since the last retry
	Nonce       string    `toml:"nonce,omitempty"`
	PromptID    string    `toml:"prompt_id,omitempty"`
	SessionID   string    `toml:"session_id,omitempty"`
	Evidence    string    `toml:"evidence,omitempty"` // event file that proved submission
	TurnEnd     string    `toml:"turn_end,omitempty"` // event file (or transcript) that closed the turn
	Reply       string    `toml:"reply,omitempty"`    // the turn's last assistant message (truncated)
	NotBefore   time.Time `toml:"not_before,omitempty"`
	SubmittedAt time.Time `toml:"submitted_at,omitempty"`
	EndedAt     time.Time `toml:"ended_at,omitempty"`
	UpdatedAt   time.Time `toml:"updated_at"`
	// ReplyBytes is the whole reply's length; Reply is a 1 KiB preview of it, and
	// inbox/replies/<id>.txt the reply itself (seat/reply.go).
	ReplyBytes int `toml:"reply_bytes,omitempty"`
}

// valid reports whether a decoded status file is one pantty wrote for id: an
// empty or truncated file decodes without error to a zero Status, and a
// copied or hand-edited one may name another message or no state at all.
// Such a file must go the unreadable way (set aside as failed, visible), not
// be taken for a queued message that the driver then never moves.
func (st Status) valid(id, path string) error {
	switch {
	case st.State == "":
		return fmt.Errorf("%s: no state (an empty or truncated status file)", path)
	case !knownState(st.State):
		return fmt.Errorf("%s: unknown state %q", path, st.State)
	case st.ID != id:
		return fmt.Errorf("%s: the status names message %q, not %q", path, st.ID, id)
	}
	return nil
}

func knownState(s string) bool {
	switch s {
	case StateQueued, StateSubmitting, StateSubmitted, StateProcessed, StateFailed:
		return true
	}
	return false
}

// ErrConflict: the message id is already stored with a different text. The
// new text was not stored; an id names one message, so a second text under it
// is refused rather than dropped without a word (the same text again is a
// duplicate: done).
var ErrConflict = errors.New("conflict")

// EnqueueResult says what a send did.
type EnqueueResult struct {
	ID        string
	Duplicate bool // the id was already stored (exit 0: done)
}

// Enqueue validates a board message and stores it durably in the inbox: the file
// is fsynced, linked into inbox/msgs without replacing anything, and the
// directory fsynced before this returns. An id already stored — in any state —
// is reported as a duplicate and nothing is written; with a different text the
// error wraps ErrConflict.
func (b Box) Enqueue(m guard.Message, maxBytes int, now time.Time) (EnqueueResult, error) {
	if m.ID == "" {
		m.ID = guard.NewMessageID(now)
	}
	if err := guard.ValidateMessage(m, maxBytes); err != nil {
		return EnqueueResult{}, err
	}
	// The guard must accept it now, so nothing is queued that could never be sent.
	if _, err := guard.Guard(m, guard.DefaultDispatchFacts); err != nil {
		if errors.Is(err, guard.ErrBadInput) {
			return EnqueueResult{}, err
		}
		return EnqueueResult{}, fmt.Errorf("%w: %v", guard.ErrBadInput, err)
	}
	st := Stored{ID: m.ID, From: m.From, Board: m.Board, Channel: m.Channel, Text: m.Text,
		Seq: now.UnixNano(), EnqueuedAt: now.UTC()}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return EnqueueResult{}, err
	}
	if err := os.MkdirAll(b.MsgsDir(), fsatomic.DirMode); err != nil {
		return EnqueueResult{}, err
	}
	// An id already stored is answered without writing (a replayed stream is
	// all duplicates); the no-replace link below still decides a race.
	if _, err := os.Lstat(b.MsgPath(m.ID)); err == nil {
		return b.duplicate(m)
	}
	err = fsatomic.LinkNew(b.Tmp, b.MsgPath(m.ID), append(data, '\n'))
	if errors.Is(err, fs.ErrExist) {
		return b.duplicate(m)
	}
	if err != nil {
		return EnqueueResult{}, err
	}
	return EnqueueResult{ID: m.ID}, nil
}

// duplicate answers a send of an id already stored: done when the text is the
// same, a conflict naming both lengths when it is not. A stored file that
// cannot be read is left to the reader that sets it aside; the send is then
// answered as a duplicate.
func (b Box) duplicate(m guard.Message) (EnqueueResult, error) {
	res := EnqueueResult{ID: m.ID, Duplicate: true}
	old, err := b.ReadStored(m.ID)
	if err != nil || old.Text == m.Text {
		return res, nil
	}
	return res, fmt.Errorf("%w: message %s is already stored with a different text (%d bytes stored, %d sent); nothing was stored: send it under a new id",
		ErrConflict, m.ID, len(old.Text), len(m.Text))
}

// MsgPath is the file of message id.
func (b Box) MsgPath(id string) string { return filepath.Join(b.MsgsDir(), id+".json") }

// ReadStored reads one stored message.
func (b Box) ReadStored(id string) (Stored, error) {
	var m Stored
	data, err := fsafe.ReadBounded(b.MsgPath(id), MaxMessageFile)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %v", b.MsgPath(id), err)
	}
	if m.ID != id {
		return m, fmt.Errorf("%s: id %q does not match its file name", b.MsgPath(id), m.ID)
	}
	return m, nil
}

// Entry is a message with its current state, for listing in queue order.
type Entry struct {
	Msg    Stored
	Status Status
	// SetAside is why this entry's files could not be read, when its Status
	// is the failed status pantty gives it and not yet recorded; the driver
	// records it (readEntry, Driver.setAside).
	SetAside string
}

// SortEntries orders entries by enqueue time, then id.
func SortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Msg.Seq != es[j].Msg.Seq {
			return es[i].Msg.Seq < es[j].Msg.Seq
		}
		return es[i].Msg.ID < es[j].Msg.ID
	})
}

// Cursor is cursor.toml: the position up to which every message is in a final
// state, with the evidence that closed the last one. It never passes a message
// that is not final.
type Cursor struct {
	Seq      int64     `toml:"seq"`
	ID       string    `toml:"id"`
	State    string    `toml:"state"`
	ClosedBy string    `toml:"closed_by"`
	Closed   int       `toml:"closed"` // messages at or before the cursor
	Updated  time.Time `toml:"updated"`
}

// CursorOf computes the cursor for entries in queue order.
func CursorOf(es []Entry) (Cursor, bool) {
	var c Cursor
	ok := false
	for _, e := range es {
		if e.Msg.From == guard.ReservedSender {
			continue // pantty's own prompts never move the board's cursor
		}
		if !Final(e.Status.State) {
			break
		}
		ok = true
		c = Cursor{Seq: e.Msg.Seq, ID: e.Msg.ID, State: e.Status.State, Closed: c.Closed + 1}
		if e.Status.TurnEnd != "" {
			c.ClosedBy = e.Status.TurnEnd
		} else {
			c.ClosedBy = e.Status.Reason
		}
	}
	return c, ok
}
