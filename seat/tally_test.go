package seat

import (
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"os"
	"testing"
	"time"
)

// TestPruneKeepsTheTotals: the totals (tally + stored finals) are the same
// before and after a prune, and a prune cut short after counting its batch
// does not count it again.
func TestPruneKeepsTheTotals(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir(), "tally")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-MessageRetention - time.Hour)
	final := map[string]Status{
		"m1": {State: StateProcessed, EndedAt: long},
		"m2": {State: StateFailed, Reason: ReasonWorkError, EndedAt: long},
		"m3": {State: StateFailed, Reason: ReasonCancelled, EndedAt: long},
		"m4": {State: StateProcessed, EndedAt: time.Now()}, // within retention: stays
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
	totals := func() Totals {
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
	want := Totals{Processed: 2, Failed: map[string]int{ReasonWorkError: 1, ReasonCancelled: 1}}
	check := func(when string) {
		t.Helper()
		got := totals()
		if got.Processed != want.Processed || len(got.Failed) != len(want.Failed) ||
			got.Failed[ReasonWorkError] != 1 || got.Failed[ReasonCancelled] != 1 {
			t.Fatalf("%s: totals %+v, want %+v", when, got, want)
		}
	}
	check("before any prune")

	// A prune cut short: the batch is counted and named, one message deleted.
	es := mustEntries(t, s)
	var tl Tally
	tl.countPruned(es[:2])
	if err := fsatomic.WriteState(s.TmpDir(), s.TallyPath(), tl); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.msgPath("m1")); err != nil {
		t.Fatal(err)
	}
	check("after a prune cut short")

	cur, _ := CursorOf(mustEntries(t, s))
	if n := s.Prune(time.Now(), cur); n == 0 {
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
