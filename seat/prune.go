package seat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// Retention: how long consumed evidence and finished work are kept. A message id
// is recognised as a duplicate only while its file exists, so MessageRetention
// is also how long a board may safely replay old ids.
const (
	EventRetention   = 7 * 24 * time.Hour  // events/seen/*
	MessageRetention = 30 * 24 * time.Hour // final messages behind the cursor, their status, reply and artifacts
	ControlRetention = 24 * time.Hour      // control/done/*
)

// Prune removes what the retention rule says is old: consumed events, answered
// control requests, and final messages behind the cursor that ended long ago.
// Only the driver runs it (it owns the inbox state). It returns how many files
// it removed.
func Prune(s state.Seat, now time.Time, cursor inbox.Cursor) int {
	n := 0
	n += pruneOlder(s.SeenDir(), now.Add(-EventRetention))
	n += pruneOlder(s.ControlDoneDir(), now.Add(-ControlRetention))
	v, err := s.View()
	if err != nil {
		return n
	}
	cutoff := now.Add(-MessageRetention)
	var batch []inbox.Entry
	for _, r := range v.Final {
		e, ok := s.ReadFinal(v, r)
		if !ok || e.SetAside != "" || e.Msg.Seq > cursor.Seq || !inbox.Final(e.Status.State) || e.Status.EndedAt.After(cutoff) {
			continue
		}
		batch = append(batch, e)
	}
	// Count the batch before a file of it goes, so the totals never drop: a
	// tally that cannot be written prunes nothing this time.
	tally, terr := s.ReadTally()
	if len(batch) > 0 {
		tally.CountPruned(batch)
		terr = errors.Join(terr, fsatomic.WriteState(s.TmpDir(), s.TallyPath(), tally))
	}
	if terr != nil {
		return n
	}
	var stuck []string // counted in the tally but still stored: they stay named
	for _, e := range batch {
		// The message file first: a status file without its message is ignored,
		// but a message without its status would read as queued again if the
		// removal stopped half-way.
		if os.Remove(s.MsgPath(e.Msg.ID)) != nil {
			stuck = append(stuck, e.Msg.ID)
			continue
		}
		n++
		for _, dir := range s.StatusDirs() {
			if os.Remove(filepath.Join(dir, e.Msg.ID+".toml")) == nil {
				n++
			}
		}
		if os.Remove(s.ReplyPath(e.Msg.ID)) == nil {
			n++
		}
		for _, a := range s.ArtifactFiles(e.Msg.ID) {
			if os.Remove(a.Path()) == nil {
				n++
			}
		}
	}
	if len(tally.Pruning) != len(stuck) {
		tally.Pruning = stuck
		_ = fsatomic.WriteState(s.TmpDir(), s.TallyPath(), tally) // left as it was, the names only cost a lookup
	}
	return n
}

func pruneOlder(dir string, cutoff time.Time) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			if os.Remove(filepath.Join(dir, e.Name())) == nil {
				n++
			}
		}
	}
	return n
}
