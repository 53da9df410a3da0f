package seat

import (
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// WaitFinal waits until every id is processed or failed, or the limit passes.
func WaitFinal(s state.Seat, ids []string, limit time.Duration) error {
	done := 0
	err := WaitUntil(s, limit, func() bool {
		done = 0
		for _, id := range ids {
			if st, err := s.ReadStatus(id); err == nil && inbox.Final(st.State) {
				done++
			}
		}
		return done == len(ids)
	})
	if err != nil {
		return fmt.Errorf("seat %q: %d of %d message(s) final after %s; see %s", s.Name, done, len(ids), limit, s.DriverLogPath())
	}
	return nil
}

// WaitUntil waits, on fsnotify events from the inbox status and the seat
// directory (watch first, then check), until cond holds or the limit passes:
// every record a waiter reads (status, heartbeat, session, context, cycle) is
// written into one of those two directories.
func WaitUntil(s state.Seat, limit time.Duration, cond func() bool) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	for _, dir := range append(s.StatusDirs(), s.Dir, s.HandoffDir()) {
		w.Add(dir) // handoff/ may not exist yet on a new seat: the others still wake the wait
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		if cond() {
			return nil
		}
		select {
		case <-w.Events:
		case <-w.Errors:
		case <-deadline.C:
			return fmt.Errorf("not within %s", limit)
		}
	}
}
