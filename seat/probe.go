package seat

import (
	"encoding/json"
	"os"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
)

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

// EnqueueInternal stores a prompt pantty writes itself (a probe, a refresh
// request) under the reserved sender. It takes the same guarded, evidence-bound
// path as board messages but never moves the board's cursor.
func (s Seat) EnqueueInternal(id, text string, now time.Time) error {
	m := guard.Message{ID: id, From: guard.ReservedSender, Text: text}
	if _, err := guard.Guard(m, guard.DefaultDispatchFacts); err != nil {
		return err
	}
	st := inbox.Stored{ID: id, From: guard.ReservedSender, Text: text, Seq: now.UnixNano(), EnqueuedAt: now.UTC()}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.MsgsDir(), fsatomic.DirMode); err != nil {
		return err
	}
	return fsatomic.LinkNew(s.TmpDir(), s.MsgPath(id), append(data, '\n'))
}
