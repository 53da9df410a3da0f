package driver

import (
	"os"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
)

// keepReply stores the turn's reply: the whole text (up to MaxReplyBytes) in
// its own file, written before the status that makes the message final, so a
// reader that sees the final state finds the reply beside it; the status keeps
// a short preview (what the probe checks) and the whole length.
func (d *Driver) keepReply(e *inbox.Entry, text string) {
	e.Status.Reply = seat.Truncate(text, seat.MaxReply)
	e.Status.ReplyBytes = len(text)
	whole := seat.CapUTF8(text, seat.MaxReplyBytes)
	err := os.MkdirAll(d.S.RepliesDir(), fsatomic.DirMode)
	if err == nil {
		err = d.S.WriteRaw(d.S.ReplyPath(e.Msg.ID), []byte(whole))
	}
	if err != nil {
		// Kept in memory and written again with the status after it
		// (durable.go): a full disk must not cost the reply.
		d.unwritten.keepReply(e.Msg.ID, whole)
		d.stateFailed("reply of "+e.Msg.ID, err)
	}
}
