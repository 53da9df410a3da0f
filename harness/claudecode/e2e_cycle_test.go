package claudecode_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// The full compaction cycle on the real binary: the handoff materialized before
// /compact (with the seat's own procedure note) is in the first request the
// stand-in receives after the compaction, and the cycle's evidence is recorded.
// The context signal comes from the real status line: a measured floor and a
// reclaimable part that the compaction shrinks.
func TestCompactionCycleReinjectsTheHandoffOnRealClaude(t *testing.T) {
	r := newRig(t, "cycle")
	r.Start()
	r.Send("c1", "first piece of work")
	r.WaitFinal(60*time.Second, "c1")
	var before state.Context
	r.WaitFor("a context reading with a floor", 30*time.Second, func() bool {
		c, err := r.Seat().ContextFile().Read()
		before = c
		return err == nil && c.FloorSource != "" && c.Window > 0
	})
	if before.Floor <= 0 || before.Floor > before.Occupancy {
		t.Fatalf("context after the first turn: %+v", before)
	}
	const note = "procedure: always run the linter before the tests"
	if res := r.RunStdin("", "handoff", "note", "--seat", "cycle", note); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	if res := r.Run("seat", "compact", "cycle", "--", "keep the procedure notes"); res.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", res, r.DriverLog())
	}
	cyc, err := r.Seat().CycleFile().Read()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.InjectedHash != cyc.Hash {
		t.Fatalf("cycle record: %+v %v", cyc, err)
	}
	sawCompact := false
	for _, q := range r.api.Requests() {
		sawCompact = sawCompact || q.Kind == "compact"
	}
	if !sawCompact {
		t.Fatal("the stand-in never saw the summarisation request")
	}
	r.Send("c2", "second piece of work")
	r.WaitFinal(60*time.Second, "c2")
	q, ok := r.request("c2")
	if !ok {
		t.Fatal("c2 never reached the stand-in")
	}
	body := string(q.Body)
	if !strings.Contains(body, note) || !strings.Contains(body, "pantty handoff for seat cycle") {
		t.Fatalf("the first request after compaction did not carry the handoff:\nbody=%s", body)
	}
	after, _ := r.Seat().ContextFile().Read()
	t.Logf("context before the cycle: occupancy %d, floor %d (%s), reclaimable %d, window %d; after: occupancy %d, reclaimable %d; cycle context_before %d after %d",
		before.Occupancy, before.Floor, before.FloorSource, before.Reclaimable, before.Window, after.Occupancy, after.Reclaimable, cyc.Before, cyc.After)
}
