package seat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// The full cycle on the simulator: the handoff materialized before /compact is
// what the model sees in the first request after the compaction.
func TestCompactionCycleReinjectsTheMaterializedHandoff(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cyc")
	h.Start()
	h.Send("m1", "first piece of work")
	h.WaitFinal(30*time.Second, "m1")
	if r := h.RunStdin("", "handoff", "note", "--seat", "cyc", "always run the linter before the tests"); r.Code != 0 {
		t.Fatalf("handoff note: %s", r)
	}
	r := h.Run("seat", "compact", "cyc", "--", "keep the procedure")
	if r.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", r, h.DriverLog())
	}
	cyc, err := h.Seat().CycleFile().Read()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.InjectedHash != cyc.Hash {
		t.Fatalf("cycle record: %+v %v", cyc, err)
	}
	// Nothing new happened since the cycle: a second cycle must refuse (the handoff did not change).
	if r := h.Run("seat", "compact", "cyc"); r.Code == 0 || !strings.Contains(r.Stderr, "did not change") {
		t.Fatalf("second compact with an unchanged handoff must be refused: %s", r)
	}
	h.Send("m2", "second piece of work")
	h.WaitFinal(30*time.Second, "m2")
	var sawCompact bool
	var next *seattest.Request
	for i, q := range h.Requests() {
		if q.Kind == "compact" {
			sawCompact = true
			if !strings.Contains(q.NewInput, "keep the procedure") {
				t.Errorf("compact instructions not passed: %q", q.NewInput)
			}
		}
		if sawCompact && q.Kind == "turn" && q.MsgID() == "m2" {
			next = &h.Requests()[i]
		}
	}
	if !sawCompact || next == nil {
		t.Fatalf("no compaction or no request after it: %+v", h.Requests())
	}
	if !strings.Contains(next.Injected, "always run the linter before the tests") || !strings.Contains(next.Injected, "pantty handoff for seat cyc") {
		t.Fatalf("the first request after compaction did not carry the handoff: injected=%q", next.Injected)
	}
}

// A compaction pantty did not choose (a person's /compact via the command door
// stands in for auto-compaction) is still preceded by materialization: the
// PreCompact hook writes the handoff itself.
func TestPreCompactHookMaterializesWhenPanttyDidNotChoose(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "auto")
	h.Start()
	h.Send("m1", "work")
	h.WaitFinal(30*time.Second, "m1")
	if r := h.Run("seat", "command", "auto", "--", "/compact"); r.Code != 0 {
		t.Fatalf("command: %s", r)
	}
	h.WaitFor("a handoff written by the PreCompact hook", 20*time.Second, func() bool {
		text, err := h.Seat().Handoff().Current()
		return err == nil && strings.Contains(text, "pre-compact hook")
	})
}

// The probe goes through the board path and passes only on a processed turn
// whose reply carries its token; it never moves the board's cursor.
func TestProbeProvesCapabilityWithoutMovingTheCursor(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "prb")
	h.Start()
	h.Send("m1", "work")
	h.WaitFinal(30*time.Second, "m1")
	var before inbox.Cursor
	h.WaitFor("the cursor at m1", 10*time.Second, func() bool {
		c, err := h.Seat().CursorFile().Read()
		before = c
		return err == nil && c.ID == "m1"
	})
	r := h.Run("seat", "probe", "prb")
	if r.Code != 0 || !strings.Contains(r.Stdout, "reply carried the token") {
		t.Fatalf("probe: %s", r)
	}
	after, _ := h.Seat().CursorFile().Read()
	if after.ID != before.ID || after.Closed != before.Closed {
		t.Fatalf("probe moved the cursor: %+v → %+v", before, after)
	}
}

// The context signal: the floor is measured on the first request of a fresh
// session and reclaimable grows with what was sent.
func TestContextSplitsFloorAndReclaimable(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ctx", seattest.Env(map[string]string{"PANTTY_SIM_FLOOR": "9000"}))
	h.Start()
	h.Send("m1", "short")
	h.WaitFinal(30*time.Second, "m1")
	var c1 state.Context
	h.WaitFor("a context reading", 10*time.Second, func() bool {
		var err error
		c1, err = h.Seat().ContextFile().Read()
		return err == nil && c1.FloorSource != ""
	})
	if c1.Floor != 9000 {
		t.Fatalf("floor %d, want the simulator's 9000 (%+v)", c1.Floor, c1)
	}
	h.Send("m2", strings.Repeat("a long message ", 400))
	h.WaitFinal(30*time.Second, "m2")
	h.WaitFor("a larger reading", 10*time.Second, func() bool {
		c2, err := h.Seat().ContextFile().Read()
		return err == nil && c2.Floor == 9000 && c2.Reclaimable > c1.Reclaimable+1000
	})
}
