package seat

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"os"
	"strings"
	"time"
)

// maxReply bounds the assistant reply kept in a message's status.
const maxReply = 1024

func truncate(s string, n int) string {
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

// startProbe proves capability, not presence: a prompt goes through the same
// board path, and the probe passes only when a model turn really ran for it and
// its reply carries the probe's token.
func (d *Driver) startProbe(r Request) {
	b := make([]byte, 6)
	rand.Read(b)
	id := "probe-" + hex.EncodeToString(b)
	text := "pantty liveness probe. Reply with the token " + id + " and nothing else; do not run tools."
	if err := d.S.EnqueueInternal(id, text, time.Now()); err != nil {
		d.answer(r, fmt.Errorf("probe: %v", err), "")
		return
	}
	if d.probes == nil {
		d.probes = map[string]Request{}
	}
	d.probes[id] = r
	d.addMessage(id)
}

func (d *Driver) answerProbe(r Request, e *inbox.Entry) {
	switch {
	case e.Status.State != inbox.StateProcessed:
		d.answer(r, fmt.Errorf("probe %s: no processed turn (%s %s)", e.Msg.ID, e.Status.State, e.Status.Reason), "")
	case !strings.Contains(e.Status.Reply, e.Msg.ID):
		d.answer(r, fmt.Errorf("probe %s: a turn ran but its reply did not carry the token", e.Msg.ID), "")
	default:
		d.answer(r, nil, fmt.Sprintf("probe %s: a model turn ran and its reply carried the token (turn end %s)", e.Msg.ID, e.Status.TurnEnd))
	}
}
