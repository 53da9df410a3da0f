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
	if err := os.MkdirAll(d.S.RepliesDir(), fsatomic.DirMode); err != nil {
		d.logf("reply %s: %v (only the preview in its status is kept)", e.Msg.ID, err)
		return
	}
	if err := d.S.WriteRaw(d.S.ReplyPath(e.Msg.ID), []byte(seat.CapUTF8(text, seat.MaxReplyBytes))); err != nil {
		d.logf("reply %s: %v (only the preview in its status is kept)", e.Msg.ID, err)
	}
}
