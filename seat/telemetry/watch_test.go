package telemetry_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
)

// watchRun runs Watch in-process, bounded, and hands its changes to the test.
type watchRun struct {
	t       *testing.T
	changes chan telemetry.Change
	done    chan error
	cancel  context.CancelFunc
}

func startWatch(t *testing.T, home, name string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	w := &watchRun{t: t, changes: make(chan telemetry.Change, 100), done: make(chan error, 1), cancel: cancel}
	go func() {
		w.done <- telemetry.Watch(ctx, home, telemetry.WatchOptions{Seat: name, Settle: 20 * time.Millisecond},
			func(c telemetry.Change) { w.changes <- c })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("watch: %v", err)
		}
	})
	return w
}

// next waits for the next line, failing the test after a deadline.
func (w *watchRun) next(what string) telemetry.Change {
	w.t.Helper()
	select {
	case c := <-w.changes:
		return c
	case <-time.After(10 * time.Second):
		w.t.Fatalf("no watch line for %s", what)
		return telemetry.Change{}
	}
}

func fields(c telemetry.Change) string {
	var out []string
	for _, f := range c.Fields {
		out = append(out, f.Field)
	}
	return strings.Join(out, ",")
}

func TestWatchPrintsOnlyMeaningfulChanges(t *testing.T) {
	f := newFixture(t)
	s := f.seat("w")
	session(t, s, "sess-w")
	now := time.Now().UTC()
	heartbeat(t, s, now, "idle")
	reading := func(occ int) state.Context {
		return state.Context{SessionID: "sess-w", Occupancy: occ, Floor: 12000, Reclaimable: occ - 12000, Window: 200000,
			Source: "status line", FloorSource: "first request", ReadAt: now}
	}
	write(t, s, contextPath(s), reading(40000)) // 20 %

	w := startWatch(t, f.home, "")
	first := w.next("the initial state")
	if !first.Initial || first.Seat != "w" || len(first.Fields) != len(telemetry.WatchedFields) {
		t.Fatalf("first line: %+v", first)
	}
	if line := telemetry.FormatChange(first); !strings.Contains(line, "context 20% of 200000") || !strings.Contains(line, "phase idle") {
		t.Errorf("initial line %q", line)
	}

	// One 5 % step: one line, naming only the context.
	write(t, s, contextPath(s), reading(50000)) // 25 %
	c := w.next("a 5% step")
	if fields(c) != "context" || c.Fields[0].From != "20% of 200000" || c.Fields[0].To != "25% of 200000" {
		t.Fatalf("step line: %s", telemetry.FormatChange(c))
	}

	// An identical rewrite, a heartbeat tick and a sub-step move print nothing;
	// the next line is the phase change written after them.
	write(t, s, contextPath(s), reading(50000))
	heartbeat(t, s, time.Now().UTC(), "idle")
	write(t, s, contextPath(s), reading(52000)) // 26 %: same step
	heartbeat(t, s, time.Now().UTC(), "in-turn")
	c = w.next("the phase change")
	if fields(c) != "phase" || c.Fields[0].From != "idle" || c.Fields[0].To != "in-turn" {
		t.Fatalf("want only the phase change, got: %s", telemetry.FormatChange(c))
	}
	if c.Row == nil || *c.Row.Context.Occupancy != 52000 {
		t.Errorf("the line's row should carry the latest reading: %+v", c.Row)
	}

	// Inbox depth and cursor moves are lines too.
	if _, err := s.Enqueue(guard.Message{ID: "m1", Text: "hi"}, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if c = w.next("a message enqueued"); fields(c) != "inbox" || c.Fields[0].To != "1" {
		t.Fatalf("inbox line: %s", telemetry.FormatChange(c))
	}
	write(t, s, s.CursorPath(), inbox.Cursor{ID: "m0", State: inbox.StateProcessed, Closed: 1})
	if c = w.next("the cursor moving"); fields(c) != "cursor" {
		t.Fatalf("cursor line: %s", telemetry.FormatChange(c))
	}

	// A seat created while watching appears.
	n := f.seat("late")
	heartbeat(t, n, time.Now().UTC(), "starting")
	for {
		c = w.next("the new seat")
		if c.Seat == "late" {
			break
		}
	}
	if !c.Initial {
		t.Errorf("a new seat's first line should be its initial state: %s", telemetry.FormatChange(c))
	}
}

func TestWatchReportsAHeartbeatGoingStaleWithoutAFileEvent(t *testing.T) {
	f := newFixture(t)
	s := f.seat("st")
	write(t, s, s.HeartbeatPath(), state.Heartbeat{At: time.Now().UTC(), Phase: "idle",
		Interval: config.Duration{Duration: 100 * time.Millisecond}, PID: 1, Holder: "h"})
	w := startWatch(t, f.home, "st")
	w.next("the initial state")
	c := w.next("the heartbeat going stale")
	if fields(c) != "phase" || !strings.HasPrefix(c.Fields[0].To, "stale") {
		t.Fatalf("stale line: %s", telemetry.FormatChange(c))
	}
}

func TestWatchUnknownSeatIsAnError(t *testing.T) {
	f := newFixture(t)
	f.seat("x")
	err := telemetry.Watch(context.Background(), f.home, telemetry.WatchOptions{Seat: "nobody"}, func(telemetry.Change) {})
	if err == nil || !strings.Contains(err.Error(), "unknown seat") {
		t.Errorf("watch of an unknown seat: %v", err)
	}
}
