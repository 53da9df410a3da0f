package driver

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// cycleDriver is idleDriver with session.toml recorded (the handoff note
// names the session) and the seat's directories made.
func cycleDriver(t *testing.T) (*Driver, *fakeServer) {
	t.Helper()
	d, pane := idleDriver(t)
	if err := d.S.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := d.S.SessionFile().Write(state.Session{ID: d.sess.ID, PaneID: d.sess.PaneID}); err != nil {
		t.Fatal(err)
	}
	d.Cfg.Compaction.Timeout.Duration = time.Hour
	return d, pane
}

// compactEvents feeds the hooks of a compaction that re-injected the handoff
// with hash injected: PreCompact, SessionStart source compact, PostCompact.
func compactEvents(d *Driver, injected string) {
	now := d.now()
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvPreCompact, File: "1-PreCompact.json", ReceivedAt: now,
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Trigger: "manual"}})
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvSessionStart, File: "2-SessionStart.json", ReceivedAt: now,
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Source: "compact"}, Pantty: map[string]string{"injected_hash": injected}})
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvPostCompact, File: "3-PostCompact.json", ReceivedAt: now,
		Fields: hookwire.HookFields{SessionID: d.sess.ID}})
}

// TestACompactionCycleTranscript pins the cycle at the boundary pantty
// chooses: the handoff is materialized (a new numbered file) before /compact
// goes through the command door; PreCompact, the SessionStart that
// re-injected that very handoff (its hash) and PostCompact make it done, in
// handoff/cycle.toml and in its dated record. A second cycle with nothing new
// to hand off is refused before any key reaches the pane: a compaction cannot
// be undone. A re-injected handoff with another hash fails the cycle.
func TestACompactionCycleTranscript(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.startCycle(nil, "test: a boundary pantty chose", "")
	answerWatches(t, d)
	c, err := d.S.CycleFile().Read()
	if err != nil || c.State != "requested" || c.Hash == "" || c.Handoff == "" {
		t.Fatalf("cycle.toml after the start: %+v, %v", c, err)
	}
	if _, err := os.Stat(c.Handoff); err != nil {
		t.Fatalf("the handoff the cycle names: %v", err)
	}
	if got := strings.Join(pane.did(), "|"); got != "paste /compact|keys Enter" {
		t.Fatalf("pane actions: %q, want /compact through the command door", got)
	}
	if d.phase != machine.Compacting {
		t.Fatalf("phase %s during the cycle", d.phase)
	}
	compactEvents(d, c.Hash)
	done, err := d.S.CycleFile().Read()
	if err != nil || done.State != "done" || done.PreCompact == "" || done.Injected == "" || done.PostCompact == "" || done.InjectedHash != c.Hash {
		t.Fatalf("cycle.toml after the evidence: %+v, %v", done, err)
	}
	if rec, err := d.S.CompactRecordFile(c.ID).Read(); err != nil || rec.State != "done" {
		t.Fatalf("the cycle's dated record: %+v, %v", rec, err)
	}
	if d.phase != machine.Idle {
		t.Fatalf("phase %s after the cycle", d.phase)
	}

	// Nothing new since (the same reason, the same queue: only the note's
	// volatile lines differ): refused, and the pane is not touched.
	before := len(pane.did())
	d.startCycle(nil, "test: a boundary pantty chose", "")
	again, err := d.S.CycleFile().Read()
	if err != nil || again.State != "failed" || !strings.Contains(again.Error, "did not change") {
		t.Fatalf("a cycle with an unchanged handoff: %+v, %v", again, err)
	}
	if got := pane.did()[before:]; len(got) != 0 {
		t.Fatalf("the pane got %q for a cycle that was refused", got)
	}
}

// TestACycleFailsOnAnotherHandoff: the SessionStart after the compaction
// injected a handoff whose hash is not the one materialized for this cycle.
func TestACycleFailsOnAnotherHandoff(t *testing.T) {
	t.Parallel()
	d, _ := cycleDriver(t)
	d.startCycle(nil, "test", "")
	c, err := d.S.CycleFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	compactEvents(d, "0123456789abcdef")
	failed, err := d.S.CycleFile().Read()
	if err != nil || failed.State != "failed" || !strings.Contains(failed.Error, "not the one materialized") || !strings.Contains(failed.Error, c.Hash) {
		t.Fatalf("cycle.toml after a foreign re-injection: %+v, %v", failed, err)
	}
}
