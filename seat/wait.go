package seat

import (
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WaitFinal waits, on fsnotify events from the inbox status and the seat
// directory (watch first, then check), until every id is processed or failed,
// or the limit passes.
func (s Seat) WaitFinal(ids []string, limit time.Duration) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	for _, dir := range []string{s.StatusDir(), s.Dir} {
		if err := w.Add(dir); err != nil {
			return err
		}
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		done := 0
		for _, id := range ids {
			if st, err := s.ReadStatus(id); err == nil && Final(st.State) {
				done++
			}
		}
		if done == len(ids) {
			return nil
		}
		select {
		case <-w.Events:
		case <-w.Errors:
		case <-deadline.C:
			return fmt.Errorf("seat %q: %d of %d message(s) final after %s; see %s", s.Name, done, len(ids), limit, s.DriverLogPath())
		}
	}
}
