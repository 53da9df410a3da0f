package seat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// TestADriverAdoptsAnInboxAnOlderPanttyWrote: a seat whose inbox an older
// pantty wrote — every status in inbox/status/, the final ones also cached in
// inbox/closed.json, the cursor over them — is taken over by a new driver:
// the final statuses move into inbox/processed/ and inbox/failed/ byte for
// byte, the cache goes, the old queued message and a new one are processed
// exactly once each, and status counts the old history with the new.
func TestADriverAdoptsAnInboxAnOlderPanttyWrote(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "older")
	s := h.Seat()
	then := time.Now().Add(-time.Hour)
	old := map[string]inbox.Status{
		"old-1": {State: inbox.StateProcessed, TurnEnd: "1-1-Stop.json"},
		"old-2": {State: inbox.StateFailed, Reason: inbox.ReasonCancelled},
		"old-3": {State: inbox.StateProcessed, TurnEnd: "3-1-Stop.json"},
	}
	for i, id := range []string{"old-1", "old-2", "old-3", "old-queued"} {
		at := then.Add(time.Duration(i) * time.Minute)
		if _, err := s.Enqueue(guard.Message{ID: id, From: "board", Text: "written before the upgrade: " + id}, 0, at); err != nil {
			t.Fatal(err)
		}
		st, final := old[id]
		if !final {
			continue // queued: no status file, in either layout
		}
		st.ID, st.Attempts, st.EndedAt, st.UpdatedAt = id, 1, at.Add(time.Second).UTC(), at.Add(time.Second).UTC()
		if err := fsatomic.WriteState(s.TmpDir(), filepath.Join(s.StatusDir(), id+".toml"), st); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "inbox", "closed.json"), []byte(`{"version":1,"entries":[]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	last, _ := s.ReadStored("old-3")
	cursor := inbox.Cursor{Seq: last.Seq, ID: "old-3", State: inbox.StateProcessed, ClosedBy: "3-1-Stop.json", Closed: 3, Updated: then.UTC()}
	if err := fsatomic.WriteState(s.TmpDir(), s.CursorPath(), cursor); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for id := range old {
		before[id], _ = os.ReadFile(filepath.Join(s.StatusDir(), id+".toml"))
	}

	h.Start()
	h.Send("new", "sent after the upgrade")
	h.WaitFinal(30*time.Second, "old-queued", "new")

	for id, st := range old {
		dir := s.ProcessedDir()
		if st.State == inbox.StateFailed {
			dir = s.FailedDir()
		}
		got, err := os.ReadFile(filepath.Join(dir, id+".toml"))
		if err != nil || string(got) != string(before[id]) {
			t.Errorf("%s in %s: %v (unchanged: %v)", id, dir, err, string(got) == string(before[id]))
		}
		if _, err := os.Lstat(filepath.Join(s.StatusDir(), id+".toml")); err == nil {
			t.Errorf("%s is still in inbox/status/", id)
		}
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, "inbox", "closed.json")); err == nil {
		t.Error("inbox/closed.json was not removed")
	}
	for _, id := range []string{"old-queued", "new"} {
		if st := h.Status(id); st.State != inbox.StateProcessed || st.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts, want processed once", id, st.State, st.Attempts)
		}
		if _, err := os.Lstat(filepath.Join(s.ProcessedDir(), id+".toml")); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// The cursor is written just after the final status that moves it.
	h.WaitFor("the cursor at new with 5 closed", 10*time.Second, func() bool {
		c, err := s.CursorFile().Read()
		return err == nil && c.ID == "new" && c.Closed == 5
	})
	r := h.Run("status", h.Name, "--json")
	var doc struct {
		Seats []struct {
			Inbox struct {
				Processed, Failed, Depth *int
			} `json:"inbox"`
		} `json:"seats"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Seats) != 1 {
		t.Fatalf("status --json: %v\n%s", err, r)
	}
	in := doc.Seats[0].Inbox
	if in.Processed == nil || *in.Processed != 4 || *in.Failed != 1 || *in.Depth != 0 {
		t.Errorf("status counts processed %v, failed %v, depth %v; want 4, 1, 0", deref(in.Processed), deref(in.Failed), deref(in.Depth))
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
