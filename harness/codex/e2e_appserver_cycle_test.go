package codex_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookwire"
)

// TestAppServerSeatCompactionCycle runs the compaction cycle on an
// app-server seat through the CLI verbs: `seat compact` materializes the
// handoff and sends thread/compact/start (no pane, no /compact typed);
// pantty's PreCompact and PostCompact hooks, run in the server, are its
// evidence; the handoff reaches the first request after the compaction
// through SessionStart(compact), as on the tmux path. Then the command
// door: `seat command -- /compact` goes the same way and is answered by
// its hooks; one whose handoff cannot be materialized is blocked by the
// PreCompact hook and refused in the server's words.
func TestAppServerSeatCompactionCycle(t *testing.T) {
	r := newRig(t, "cxask", `transport = "app-server"`)
	r.Start()
	r.Send("p1", "first piece of work")
	r.Processed("p1")
	// The context reading comes from thread/tokenUsage/updated: the
	// request's input tokens as the stand-in counted them, the floor that
	// of a fresh thread's first request, the window the server's.
	first, _ := r.Request("p1")
	r.WaitFor("a context reading of p1's request", 10*time.Second, func() bool {
		c, err := r.Seat().ContextFile().Read()
		return err == nil && c.Occupancy == first.Input
	})
	if c, _ := r.Seat().ContextFile().Read(); c.Floor != first.Input || c.Window <= 0 || !strings.Contains(c.Source, "thread/tokenUsage/updated") {
		t.Fatalf("context.toml %+v: want occupancy and floor %d, a window, source thread/tokenUsage/updated", c, first.Input)
	}
	if res := r.Run("handoff", "note", "--seat", r.Name, "always run the linter before the tests"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	t0 := time.Now()
	if res := r.Run("seat", "compact", r.Name); res.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", res, r.DriverLog())
	}
	t.Logf("seat compact answered in %s", time.Since(t0).Round(time.Millisecond))
	cyc, err := r.Seat().CycleFile().Read()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.Hash == "" {
		t.Fatalf("cycle record: %+v %v\n%s", cyc, err, r.DriverLog())
	}
	if n, _, _ := r.compaction(); n != 1 {
		t.Fatalf("%d compaction requests at the stand-in, want 1", n)
	}
	r.Send("p2", "second piece of work")
	r.Processed("p2")
	n, next, ok := r.compaction()
	if id, _, _, _ := guard.MatchHeader(next.NewInput); !ok || n != 1 || id != "p2" {
		t.Fatalf("the first turn after the compaction carried %q (compactions %d)", id, n)
	}
	if c := next.Context; !strings.Contains(c, "always run the linter before the tests") || !strings.Contains(c, "pantty handoff for seat "+r.Name) {
		t.Fatalf("the first request after the compaction did not carry the handoff: context=%q", c)
	}
	after, _ := r.Request("p2")
	r.WaitFor("the injection and the occupancy after it recorded in the cycle", 10*time.Second, func() bool {
		c, err := r.Seat().CycleFile().Read()
		return err == nil && c.Injected != "" && c.InjectedHash == c.Hash && c.Error == "" && c.After == after.Input
	})
	if c, _ := r.Seat().ContextFile().Read(); c.Occupancy != after.Input || c.Floor != first.Input {
		t.Fatalf("context.toml after the compaction %+v: want occupancy %d (the first request after it), the floor still %d", c, after.Input, first.Input)
	}
	if turns := r.Turns(); turns["p1"] != 1 || turns["p2"] != 1 {
		t.Fatalf("model turns %v", turns)
	}

	// The command door: /compact is thread/compact/start, answered by the
	// hooks; the thread and the seat stay the same.
	sess := r.Session()
	t1 := time.Now()
	if res := r.Run("seat", "command", r.Name, "--", "/compact"); res.Code != 0 || !strings.Contains(res.Stdout, hookwire.EvPostCompact) {
		t.Fatalf("seat command /compact: %s\n%s", res, r.DriverLog())
	}
	t.Logf("seat command /compact answered in %s", time.Since(t1).Round(time.Millisecond))
	if n, _, _ := r.compaction(); n != 2 {
		t.Fatalf("%d compaction requests after seat command /compact, want 2", n)
	}
	if pre := r.Events(hookwire.EvPreCompact); len(pre) != 2 || pre[1].Fields.Trigger != "manual" {
		t.Fatalf("PreCompact events %+v", pre)
	}
	// A compaction whose handoff cannot be materialized (handoff/current
	// made a directory): pantty's PreCompact hook blocks it in the server,
	// the compaction's turn ends interrupted, and the command is refused in
	// those words; nothing reached the stand-in and the seat goes on.
	cur := r.Seat().Handoff().CurrentPath()
	if err := os.RemoveAll(cur); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cur, 0o700); err != nil {
		t.Fatal(err)
	}
	t2 := time.Now()
	res := r.Run("seat", "command", r.Name, "--", "/compact")
	t.Logf("a blocked seat command /compact answered in %s: %s", time.Since(t2).Round(time.Millisecond), strings.TrimSpace(res.Stderr))
	if res.Code != 1 || !strings.Contains(res.Stderr, "interrupted: pantty's PreCompact hook blocked it") {
		t.Fatalf("seat command /compact with no handoff to materialize: %s\n%s", res, r.DriverLog())
	}
	if n, _, _ := r.compaction(); n != 2 {
		t.Fatalf("%d compaction requests after a blocked /compact, want still 2", n)
	}
	if err := os.Remove(cur); err != nil {
		t.Fatal(err)
	}
	r.Send("p3", "after the commands")
	r.Processed("p3")
	if got := r.Session().ID; got != sess.ID {
		t.Fatalf("the thread changed from %s to %s", sess.ID, got)
	}
	if turns := r.Turns(); turns["p3"] != 1 {
		t.Fatalf("model turns %v", turns)
	}
}

// TestAppServerSeatRefreshesAtItsPolicysBoundary: a refresh policy's cycle
// on an app-server seat ([refresh] fixed, every = 2): five messages queued
// at once, a compaction (thread/compact/start) before the third and the
// fifth, each on an idle thread between two turns, each cycle done, and
// every message reached the model once, the one after each compaction with
// the handoff.
func TestAppServerSeatRefreshesAtItsPolicysBoundary(t *testing.T) {
	r := newRig(t, "cxasr", `transport = "app-server"`, "[refresh]", `policy = "fixed"`, "every = 2")
	r.Start()
	ids := []string{"r1", "r2", "r3", "r4", "r5"}
	for _, id := range ids {
		r.Send(id, "work item "+id)
	}
	r.Processed(ids...)
	var order []string // the stand-in's requests in order: message ids and "compact"
	for _, q := range r.api.Requests() {
		switch q.Kind {
		case "compact":
			order = append(order, "compact")
		case "turn":
			if id, _, _, ok := guard.MatchHeader(q.NewInput); ok {
				order = append(order, id)
				if (id == "r3" || id == "r5") && !strings.Contains(q.Context, "pantty handoff for seat "+r.Name) {
					t.Errorf("%s, the first turn after a compaction, did not carry the handoff: %q", id, q.Context)
				}
			}
		}
	}
	if got := strings.Join(order, " "); got != "r1 r2 compact r3 r4 compact r5" {
		t.Fatalf("requests at the stand-in: %s, want r1 r2 compact r3 r4 compact r5\n%s", got, r.DriverLog())
	}
	recs, _ := filepath.Glob(filepath.Join(r.Seat().ArtifactsDir(), "compact-*.toml"))
	if len(recs) != 2 {
		t.Fatalf("%d compaction records, want 2", len(recs))
	}
	if c, err := r.Seat().CycleFile().Read(); err != nil || c.State != "done" {
		t.Fatalf("the last cycle: %+v %v", c, err)
	}
}
