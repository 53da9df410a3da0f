package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/statedir"
)

// MaxReplyBytes caps the reply stored per message in inbox/replies/<id>.txt.
// A board script reads the whole answer from there (`seat send --wait`,
// `seat show`), so the cap is far above any reply a model writes in one turn;
// it exists so that a runaway harness cannot fill the disk through 30 days of
// retained replies. A longer reply is cut at a UTF-8 boundary and the status's
// reply_bytes keeps the length the harness gave.
const MaxReplyBytes = 1 << 20

// RepliesDir holds one file per message whose turn ended: the model's whole
// last assistant message (the turn shape: the result envelope's result).
func (s Seat) RepliesDir() string { return s.path("inbox", "replies") }

// ReplyPath is the reply file of message id.
func (s Seat) ReplyPath(id string) string { return filepath.Join(s.RepliesDir(), id+".txt") }

// CapUTF8 cuts s to at most n bytes without splitting a character.
func CapUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Reply is a message's reply as a reader gets it.
type Reply struct {
	Text      string
	Bytes     int  // the length the harness gave (Text may be shorter: Truncated)
	Truncated bool // Text is not the whole reply (over the cap, or only the status preview was found)
	FromFile  bool // read from inbox/replies (false: the status preview)
}

// ReadReply returns the reply of a message in status st: the reply file when
// there is one, else the status's preview. A message with no reply at all
// (not ended yet, or cancelled before any answer) has an empty Reply.
func (s Seat) ReadReply(st inbox.Status) (Reply, error) {
	if st.ReplyBytes == 0 {
		// No reply recorded for the current attempt (a retried message keeps the
		// file of its earlier turn until its new turn ends), or one from before
		// replies had files: the status preview is all there is.
		return Reply{Text: st.Reply, Bytes: len(st.Reply), Truncated: len(st.Reply) > MaxReply}, nil
	}
	data, err := ReadRegular(s.ReplyPath(st.ID))
	switch {
	case err == nil:
		n := st.ReplyBytes
		if n < len(data) {
			n = len(data)
		}
		return Reply{Text: string(data), Bytes: n, Truncated: len(data) < n, FromFile: true}, nil
	case errors.Is(err, fs.ErrNotExist):
		// The file could not be written (the driver logged why): the preview.
		return Reply{Text: st.Reply, Bytes: st.ReplyBytes, Truncated: st.ReplyBytes > len(st.Reply) || len(st.Reply) > MaxReply}, nil
	default:
		return Reply{}, fmt.Errorf("seat %q: reply of %s: %w", s.Name, st.ID, err)
	}
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

// ArtifactFile is artifacts/<id>.<attempt>.toml: exactly what one attempt of
// message id pasted.
func (s Seat) ArtifactFile(id string, attempt int) statedir.File[Artifact] {
	return bind[Artifact](s, s.path("artifacts", fmt.Sprintf("%s.%d.toml", id, attempt)))
}

// RefreshFile is artifacts/refresh-<unix ns>.toml: one refresh decision.
func (s Seat) RefreshFile(at time.Time) statedir.File[RefreshDecision] {
	return bind[RefreshDecision](s, s.path("artifacts", fmt.Sprintf("refresh-%d.toml", at.UnixNano())))
}

// CommandFile is artifacts/command-<unix ns>.toml: one command the command
// door ran.
func (s Seat) CommandFile(at time.Time) statedir.File[CommandRecord] {
	return bind[CommandRecord](s, s.path("artifacts", fmt.Sprintf("command-%d.toml", at.UnixNano())))
}

// CommandRecord is what the command door records of each command it runs
// (CommandFile): only an adapter authors one.
type CommandRecord struct {
	Command string    `toml:"command"`
	Author  string    `toml:"author"`
	At      time.Time `toml:"at"`
}

// ArtifactFiles binds every attempt's artifact of message id, oldest attempt
// first by name (artifacts/<id>.<attempt>.toml).
func (s Seat) ArtifactFiles(id string) []statedir.File[Artifact] {
	paths, _ := filepath.Glob(filepath.Join(s.ArtifactsDir(), id+".*.toml"))
	out := make([]statedir.File[Artifact], len(paths))
	for i, p := range paths {
		out[i] = bind[Artifact](s, p)
	}
	return out
}

// MaxReply bounds the assistant reply kept in a message's status.
const MaxReply = 1024

// Truncate keeps the first n bytes of s and marks the cut with "…" (records
// that keep a bounded excerpt).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
