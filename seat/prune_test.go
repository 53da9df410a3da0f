package seat

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

func TestPruneRemovesOnlyOldFinalWorkBehindTheCursor(t *testing.T) {
	t.Parallel()
	s, err := state.Open(t.TempDir(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-MessageRetention - time.Hour)
	for i, id := range []string{"a", "b", "c", "d"} {
		if _, err := s.Enqueue(guard.Message{ID: id, Text: "x"}, 0, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	// a: old, processed; b: recent, processed; c: queued; d: old, processed, but
	// after the queued c, so beyond the cursor.
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.WriteStatus(inbox.Status{ID: "a", State: inbox.StateProcessed, EndedAt: old}))
	must(s.WriteStatus(inbox.Status{ID: "b", State: inbox.StateProcessed, EndedAt: now}))
	must(s.WriteStatus(inbox.Status{ID: "d", State: inbox.StateProcessed, EndedAt: old}))
	es, err := s.Entries()
	must(err)
	cur, _ := inbox.CursorOf(es)
	if cur.ID != "b" {
		t.Fatalf("cursor at %q, want b", cur.ID)
	}
	seen := filepath.Join(s.SeenDir(), "1-1-Stop.json")
	fresh := filepath.Join(s.SeenDir(), "2-1-Stop.json")
	must(os.WriteFile(seen, []byte("{}"), 0o600))
	must(os.WriteFile(fresh, []byte("{}"), 0o600))
	must(os.Chtimes(seen, old, old))

	Prune(s, now, cur)

	for id, want := range map[string]bool{"a": false, "b": true, "c": true, "d": true} {
		_, err := os.Stat(s.MsgPath(id))
		if got := err == nil; got != want {
			t.Errorf("message %s kept=%v, want %v", id, got, want)
		}
	}
	if _, err := os.Stat(seen); err == nil {
		t.Error("old consumed event was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("fresh consumed event was removed")
	}
	// A pruned id is no longer a duplicate: documented in docs/state.md.
	res, err := s.Enqueue(guard.Message{ID: "b", Text: "x"}, 0, now)
	must(err)
	if !res.Duplicate {
		t.Error("b is still stored and must be a duplicate")
	}
}
