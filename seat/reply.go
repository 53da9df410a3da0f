package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"unicode/utf8"

	"github.com/pantty/pantty/internal/inbox"
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
