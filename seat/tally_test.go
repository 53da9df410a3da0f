package seat

import (
	"os"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// TestPruneKeepsTheTotals: the totals (tally + stored finals) are the same
// before and after a prune, and a prune cut short after counting its batch
// does not count it again.
func TestPruneKeepsTheTotals(t *testing.T) {
	t.Parallel()
	s, err := state.Open(t.TempDir(), "tally")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-MessageRetention - time.Hour)
	final := map[string]inbox.Status{
		"m1": {State: inbox.StateProcessed, EndedAt: long},
		"m2": {State: inbox.StateFailed, Reason: inbox.ReasonWorkError, EndedAt: long},
		"m3": {State: inbox.StateFailed, Reason: inbox.ReasonCancelled, EndedAt: long},
		"m4": {State: inbox.StateProcessed, EndedAt: time.Now()}, // within retention: stays
	}
	for i, id := range []string{"m1", "m2", "m3", "m4"} {
		m := guard.Message{ID: id, From: "board", Text: "work " + id}
		if _, err := s.Enqueue(m, guard.DefaultMaxMessageBytes, time.Now().Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		st := final[id]
		st.ID = id
		if err := s.WriteStatus(st); err != nil {
			t.Fatal(err)
		}
	}
	totals := func() inbox.Totals {
		t.Helper()
		v, err := s.View()
		if err != nil {
			t.Fatal(err)
		}
		tl, err := s.ReadTally()
		if err != nil {
			t.Fatal(err)
		}
		return s.Totals(tl, v)
	}
	want := inbox.Totals{Processed: 2, Failed: map[string]int{inbox.ReasonWorkError: 1, inbox.ReasonCancelled: 1}}
	check := func(when string) {
		t.Helper()
		got := totals()
		if got.Processed != want.Processed || len(got.Failed) != len(want.Failed) ||
			got.Failed[inbox.ReasonWorkError] != 1 || got.Failed[inbox.ReasonCancelled] != 1 {
			t.Fatalf("%s: totals %+v, want %+v", when, got, want)
		}
	}
	check("before any prune")

	// A prune cut short: the batch is counted and named, one message deleted.
	es := mustEntries(t, s)
	var tl inbox.Tally
	tl.CountPruned(es[:2])
	if err := fsatomic.WriteState(s.TmpDir(), s.TallyPath(), tl); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.MsgPath("m1")); err != nil {
		t.Fatal(err)
	}
	check("after a prune cut short")

	cur, _ := inbox.CursorOf(mustEntries(t, s))
	if n := Prune(s, time.Now(), cur); n == 0 {
		t.Fatal("the prune removed nothing")
	}
	if left := mustEntries(t, s); len(left) != 1 || left[0].Msg.ID != "m4" {
		t.Fatalf("after the prune the inbox holds %d messages, want only m4", len(left))
	}
	check("after the prune finished")
	if tl, _ := s.ReadTally(); len(tl.Pruning) != 0 {
		t.Fatalf("the finished prune left ids named: %v", tl.Pruning)
	}
}

func mustEntries(t *testing.T, s state.Seat) []inbox.Entry {
	t.Helper()
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}
