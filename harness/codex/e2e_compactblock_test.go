package codex_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/seat/hookwire"
)

// TestSeatsAppServerRefusesABlockedCompaction: with no session.toml the
// handoff cannot be materialized, so pantty's PreCompact hook blocks
// thread/compact/start on a seat's own server. Codex 0.171.0 does not take
// exit 2 as a PreCompact block (measured: the compaction went ahead), so the
// Codex hook answers exit 0 with {"continue":false,"stopReason":…}: the
// compaction's turn ends interrupted, no summarisation request reaches the
// stand-in, the PreCompact event records the block, and the thread's next
// turn still runs.
func TestSeatsAppServerRefusesABlockedCompaction(t *testing.T) {
	r, s, _, _, c, th := seatServer(t, "cxappb")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var seen []string
	var t0 time.Time
	turns := clientTurns{t: t, ctx: ctx, c: c, thread: th.ID, seen: func(m appserver.Message) {
		if !t0.IsZero() {
			seen = append(seen, fmt.Sprintf("%s %s", time.Since(t0).Round(time.Millisecond), hookNote(m)))
		}
	}}
	turns.submit("app-b1")
	if _, err := s.SessionFile().Read(); err == nil {
		t.Fatal("the seat has a session.toml: the handoff would materialize")
	}
	t0 = time.Now()
	if err := c.Compact(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	end := turns.end("")
	took := time.Since(t0)
	n, _, _ := r.compaction()
	var block string
	for _, ev := range r.Events(hookwire.EvPreCompact) {
		block = ev.Pantty["block"]
	}
	t.Logf("thread/compact/start → turn/completed %s after %s; %d summarisation requests; PreCompact note block %q", end.Status, took.Round(time.Millisecond), n, block)
	t.Logf("notifications after thread/compact/start:\n%s", strings.Join(seen, "\n"))
	if block == "" {
		t.Fatal("no PreCompact event with a block note")
	}
	if end.Status != appserver.StatusInterrupted || n != 0 {
		t.Fatalf("the blocked compaction ended %s with %d summarisation requests, want interrupted and none", end.Status, n)
	}
	t0 = time.Time{}
	if e := turns.submit("app-b2"); e.Status != appserver.StatusCompleted {
		t.Fatalf("the turn after the blocked compaction ended %s", e.Status)
	}
	if n, _, _ := r.compaction(); n != 0 {
		t.Fatalf("%d summarisation requests after the blocked compaction", n)
	}
}

// hookNote is one notification in a log line: its method, and for a hook's
// start or end and a turn's end what it carries.
func hookNote(m appserver.Message) string {
	if e, ok := appserver.TurnEnd(m); ok {
		return fmt.Sprintf("%s status=%s", m.Method, e.Status)
	}
	if strings.HasPrefix(m.Method, "hook/") {
		return fmt.Sprintf("%s %s", m.Method, m.Params)
	}
	return m.Method
}

// TestTypedCompactIsRefusedWhenTheHandoffCannotBeMaterialized: a person's
// /compact typed into a resident seat's TUI, with handoff/current made a
// directory so the PreCompact hook cannot materialize: Codex 0.171.0 shows
// "Hook failed" and compacts anyway on exit 2 (measured), and shows "Hook
// stopped" and does not compact on the Codex hook's {"continue":false}. No
// summarisation request reaches the stand-in, the PreCompact event records the
// block, and the seat processes the next board message.
func TestTypedCompactIsRefusedWhenTheHandoffCannotBeMaterialized(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-block")
	r.Start()
	r.Send("k1", "first piece of work")
	r.Processed("k1")
	cur := r.Seat().Handoff().CurrentPath()
	if err := os.RemoveAll(cur); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cur, 0o700); err != nil {
		t.Fatal(err)
	}
	// Typed as a person types it, once the TUI shows no turn running (k1's
	// Stop hook can come before the TUI ends its task: a /compact then is
	// refused, "'/compact' is disabled while a task is in progress", seen
	// once in a loaded run), then Enter once the box shows it.
	r.WaitFor("the TUI idle after k1", 10*time.Second, func() bool { return !codex.Adapter{}.Busy(r.Screen()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pane := r.Session().PaneID
	var t0 time.Time
	for try := 1; ; try++ {
		if err := r.Tmux().SendLiteral(ctx, pane, "/compact"); err != nil {
			t.Fatal(err)
		}
		r.WaitFor("/compact in the box", 10*time.Second, func() bool { return strings.Contains(r.Screen(), "› /compact") })
		const busyNote = "is disabled while a task is in progress"
		seen := strings.Count(r.Screen(), busyNote)
		t0 = time.Now()
		if err := r.Tmux().SendKeys(ctx, pane, "Enter"); err != nil {
			t.Fatal(err)
		}
		// A person who reads the refusal types it again a moment later.
		refused := false
		r.WaitFor("the TUI to take or refuse /compact", 10*time.Second, func() bool {
			refused = strings.Count(r.Screen(), busyNote) > seen
			return refused || len(r.Events(hookwire.EvPreCompact)) > 0
		})
		if !refused || try == 3 {
			break
		}
		t.Logf("try %d: /compact refused while the TUI still ended k1's task; typing it again", try)
		time.Sleep(time.Second) // a person's reading time, not a wait for a state
	}
	var pre hookwire.Event
	r.WaitFor("the PreCompact event", 30*time.Second, func() bool {
		if time.Since(t0) > 25*time.Second {
			t.Logf("screen:\n%s", r.Screen())
		}
		evs := r.Events(hookwire.EvPreCompact)
		if len(evs) > 0 {
			pre = evs[0]
		}
		return len(evs) > 0
	})
	took := time.Since(t0)
	var screen string
	r.WaitFor("the TUI's answer to the hook", 30*time.Second, func() bool {
		screen = r.Screen()
		return strings.Contains(screen, "Hook stopped") || strings.Contains(screen, "Context compacted")
	})
	answered := time.Since(t0)
	time.Sleep(2 * time.Second) // a compaction that went ahead sends its request within this
	n, _, _ := r.compaction()
	t.Logf("/compact → PreCompact event %s, TUI answer %s; %d summarisation requests; %d Interrupt events; block %q",
		took.Round(time.Millisecond), answered.Round(time.Millisecond), n, len(r.Events("Interrupt")), pre.Pantty["block"])
	t.Logf("screen:\n%s", r.Screen())
	if pre.Pantty["block"] == "" {
		t.Fatalf("PreCompact did not record a block: %v", pre.Pantty)
	}
	if n != 0 || !strings.Contains(screen, "Hook stopped") {
		t.Fatalf("the blocked /compact went ahead: %d summarisation requests", n)
	}
	if !strings.Contains(r.DriverLog(), "the hook answered block") {
		t.Fatalf("driver.log does not say the hook blocked:\n%s", r.DriverLog())
	}
	r.Send("k2", "second piece of work")
	r.Processed("k2")
	if n, _, _ := r.compaction(); n != 0 {
		t.Fatalf("%d summarisation requests after the blocked /compact", n)
	}
}
