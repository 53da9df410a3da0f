package seat_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// decisions reads the refresh decisions the driver recorded.
func decisions(t *testing.T, h *seattest.Harness) []state.RefreshDecision {
	paths, _ := filepath.Glob(filepath.Join(h.Seat().ArtifactsDir(), "refresh-*.toml"))
	var out []state.RefreshDecision
	for _, p := range paths {
		var d state.RefreshDecision
		if err := state.ReadState(p, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func cycles(h *seattest.Harness) int {
	paths, _ := filepath.Glob(filepath.Join(h.Seat().ArtifactsDir(), "compact-*.toml"))
	return len(paths)
}

func TestRefreshFixedCompactsAfterEveryNMessages(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "fixed", seattest.TOML("[refresh]", "policy = \"fixed\"", "every = 2"))
	h.Start()
	for _, id := range []string{"m1", "m2", "m3", "m4", "m5"} {
		h.Send(id, "work item "+id)
	}
	h.WaitFinal(60*time.Second, "m1", "m2", "m3", "m4", "m5")
	if n := cycles(h); n != 2 {
		t.Fatalf("%d compaction cycles for 5 messages with every = 2, want 2 (before m3 and m5)", n)
	}
	ds := decisions(t, h)
	if len(ds) != 2 || ds[0].Next != "m3" || ds[0].Processed != 2 || ds[0].Every != 2 {
		t.Fatalf("decisions: %+v", ds)
	}
}

func TestRefreshContextDecidesWithTheNextMessagesEstimate(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ctxp", seattest.Env(map[string]string{"PANTTY_SIM_FLOOR": "1000", "PANTTY_SIM_WINDOW": "20000"}),
		seattest.TOML("[refresh]", "policy = \"context\"", "threshold = 0.5"))
	h.Start()
	// ~4,000 tokens held, then ~6,000 more would cross half of (20000 − 1000);
	// the next message alone would not, so a refresh makes room for it.
	h.Send("first", strings.Repeat("0123456789abcdef", 1000))
	h.WaitFinal(30*time.Second, "first")
	h.Send("second", strings.Repeat("0123456789abcdef", 1500))
	h.WaitFinal(60*time.Second, "second")
	var refresh *state.RefreshDecision
	for _, d := range decisions(t, h) {
		if d.Next == "second" && d.Decision == "refresh" {
			d := d
			refresh = &d
		}
	}
	if refresh == nil || refresh.Estimate < 5900 || refresh.Floor != 1000 || refresh.Window != 20000 || refresh.Pressure < 0.5 || refresh.Reclaimable < 3900 {
		t.Fatalf("no recorded refresh decision with its numbers before the second message: %+v", decisions(t, h))
	}
	if n := cycles(h); n != 1 {
		t.Fatalf("%d cycles, want 1 (no second refresh before anything was processed)", n)
	}
	// A message that alone crosses the threshold is sent: refreshing cannot help.
	h.Send("huge", strings.Repeat("0123456789abcdef", 2600))
	h.WaitFinal(60*time.Second, "huge")
	if n := cycles(h); n != 1 {
		t.Fatalf("%d cycles after the huge message, want still 1", n)
	}
	sent := false
	for _, d := range decisions(t, h) {
		sent = sent || d.Next == "huge" && d.Decision == "send" && strings.Contains(d.Reason, "alone")
	}
	if !sent {
		t.Fatalf("no recorded send decision saying the huge message alone crosses: %+v", decisions(t, h))
	}
}

func TestRefreshSelfRunsWhenTheSeatAsks(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "self", seattest.TOML("[refresh]", "policy = \"self\""))
	h.Start()
	h.Send("m1", "work")
	h.WaitFinal(30*time.Second, "m1")
	// From inside the seat: PANTTY_SEAT names it (the harness sets it).
	r := h.RunEnv(map[string]string{"PANTTY_SEAT": "self", "PANTTY_SEAT_HOME": h.Home}, "", "handoff", "request")
	if r.Code != 0 {
		t.Fatalf("handoff request: %s", r)
	}
	h.Send("m2", "more work")
	h.WaitFinal(30*time.Second, "m2")
	if cycles(h) != 1 {
		t.Fatalf("%d cycles after the seat asked, want 1", cycles(h))
	}
}
