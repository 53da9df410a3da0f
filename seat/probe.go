package seat

import (
	"encoding/json"
	"os"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// EnqueueInternal stores a prompt pantty writes itself (a probe, a refresh
// request) under the reserved sender. It takes the same guarded, evidence-bound
// path as board messages but never moves the board's cursor.
func EnqueueInternal(s state.Seat, id, text string, now time.Time) error {
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
