package codex_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookwire"
)

// TestAutoCompactionAtTheWindowEdge measures what model_auto_compact_token_limit
// = 2^60 buys on the real Codex: nothing at the window's edge. Codex clamps the
// limit to 90% of the model's window, so a thread whose last request used more
// than that is compacted by Codex itself at the start of the next turn. The
// stand-in reports the token count ([standin:tokens=N]); the window is what
// Codex itself records (rollout model_context_window, 95% of the model's).
// Below the clamp nothing happens; above it the compaction comes, pantty's
// PreCompact hook materializes the handoff for that boundary it did not
// choose, SessionStart(compact) carries it into the next request, and the
// board message whose turn it interrupted is processed once.
func TestAutoCompactionAtTheWindowEdge(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-edge")
	r.Start()
	r.Send("w1", "first")
	r.Processed("w1")
	if res := r.Run("handoff", "note", "--seat", r.Name, "the edge test's procedure note"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	r.WaitFor("a context reading with the window", 10*time.Second, func() bool {
		c, err := r.Seat().ContextFile().Read()
		return err == nil && c.Window > 0
	})
	c, _ := r.Seat().ContextFile().Read()
	below, above := c.Window*94/100, c.Window*96/100
	t.Logf("window %d (Codex's, 95%% of the model's): %d tokens is below 90%% of the model's window, %d above", c.Window, below, above)

	r.Send("w2", fmt.Sprintf("below the clamp\n[standin:tokens=%d]", below))
	r.Send("w3", "the turn after it")
	r.Processed("w2", "w3")
	if n, _, _ := r.compaction(); n != 0 {
		t.Fatalf("Codex compacted after a %d-token request (%d compactions): the clamp is lower than measured", below, n)
	}

	r.Send("w4", fmt.Sprintf("above the clamp\n[standin:tokens=%d]", above))
	r.Send("w5", "the turn it interrupts")
	r.Processed("w4", "w5")
	n, q, ok := r.compaction()
	if n != 1 {
		t.Fatalf("%d compactions after a %d-token request, want 1 (Codex's own)", n, above)
	}
	pre := r.Events(hookwire.EvPreCompact)
	if len(pre) != 1 || pre[0].Fields.Trigger != "auto" {
		t.Fatalf("PreCompact events %+v, want one with trigger auto", pre)
	}
	if !strings.Contains(r.DriverLog(), "compaction not chosen by pantty (trigger auto): handoff materialized by hook") {
		t.Fatalf("the driver did not record the unchosen boundary:\n%s", r.DriverLog())
	}
	if !ok {
		t.Fatal("no turn after the compaction")
	}
	if id, _, _, _ := guard.MatchHeader(q.NewInput); id != "w5" {
		t.Fatalf("the first turn after the compaction carried %q, want w5", id)
	}
	if !strings.Contains(q.Context, "the edge test's procedure note") {
		t.Fatalf("the first request after Codex's compaction did not carry pantty's handoff: context=%q", q.Context)
	}
	for id, n := range r.Turns() {
		if n != 1 {
			t.Errorf("message %s reached the model %d times, want 1", id, n)
		}
	}
}
