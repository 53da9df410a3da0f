package driver

import (
	"errors"
	"io/fs"
	"os"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// keepReply stores the turn's reply: the status keeps a preview of up to
// MaxReply bytes (what the probe checks) and the whole length; a longer reply
// (up to MaxReplyBytes) gets a file of its own, written before the status
// that makes the message final, so a reader that sees the final state finds
// the reply beside it.
func (d *Driver) keepReply(e *inbox.Entry, text string) {
	e.Status.Reply = state.Truncate(text, state.MaxReply)
	e.Status.ReplyBytes = len(text)
	whole := state.CapUTF8(text, state.MaxReplyBytes)
	if len(text) <= state.MaxReply {
		// The preview in the status is the whole reply: a file would only
		// repeat it, at a page of disk each (docs/state.md). A file an
		// earlier attempt left must go, or a reader would take it for this
		// turn's reply.
		if err := os.Remove(d.S.ReplyPath(e.Msg.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("reply %s: %v", e.Msg.ID, err)
		}
		return
	}
	if err := d.writeReply(e.Msg.ID, whole); err != nil {
		// Kept in memory and written again with the status after it
		// (durable.go): a full disk must not cost the reply.
		d.unwritten.keepReply(e.Msg.ID, whole)
		d.stateFailed("reply of "+e.Msg.ID, err)
	}
}

// writeReply stores a whole reply in inbox/replies/ (keepReply, and again
// from flushState after a failed write).
func (d *Driver) writeReply(id, text string) error {
	if err := os.MkdirAll(d.S.RepliesDir(), fsatomic.DirMode); err != nil {
		return err
	}
	return d.S.WriteRaw(d.S.ReplyPath(id), []byte(text))
}
