package feed

import (
	"context"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// TestFollowPrintsSeatChangesFromRecords writes a seat's records by hand, the
// way the driver and recover do, and reads what a follower prints: a health
// snapshot, then a line per mode, intent and message change, and a health line
// only when the verdict or its cause changes (not for every sweep).
func TestFollowPrintsSeatChangesFromRecords(t *testing.T) {
	home := t.TempDir()
	s, err := state.Open(home, "fa")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(s, "sim", t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	health := func(verdict, cause string) {
		t.Helper()
		if err := state.HealthFile(s).Write(state.Health{At: time.Now().UTC(), Verdict: verdict, Cause: cause, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	health("ok", "")

	ctx, cancel := context.WithCancel(context.Background())
	lines := make(chan Event, 64)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, home, Options{Follow: true, Settle: 10 * time.Millisecond}, func(e Event) error { lines <- e; return nil })
	}()
	next := func(what string) Event {
		t.Helper()
		select {
		case e := <-lines:
			return e
		case <-time.After(20 * time.Second):
			t.Fatalf("no line for %s", what)
		}
		return Event{}
	}
	if e := next("the health snapshot"); e.Type != TypeHealth || e.Verdict != "ok" || !e.Snapshot || e.Cursor != "" {
		t.Fatalf("first line %+v, want the health snapshot without a cursor", e)
	}
	// The follower watches before it scans; a write now is seen by one or the other.
	if err := s.ModeFile().Write(state.Mode{Mode: state.ModeRelay, Since: time.Now().UTC(), Why: "a person attached"}); err != nil {
		t.Fatal(err)
	}
	if e := next("the mode change"); e.Type != TypeMode || e.Mode != state.ModeRelay || e.Cursor == "" {
		t.Fatalf("got %+v, want the relay mode line", e)
	}
	health("dead", "harness-down")
	if e := next("the health change"); e.Type != TypeHealth || e.Verdict != "dead" || e.Cause != "harness-down" || e.Snapshot {
		t.Fatalf("got %+v, want the dead verdict", e)
	}
	health("dead", "harness-down") // the next sweep, same verdict: no line
	if err := s.SetIntent(state.IntentStopped, "test"); err != nil {
		t.Fatal(err)
	}
	if e := next("the intent change"); e.Type != TypeIntent || e.Want != state.IntentStopped {
		t.Fatalf("got %+v, want the intent line (a repeated verdict prints nothing)", e)
	}
	if _, err := s.Enqueue(guard.Message{ID: "m1", Text: "hello"}, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if e := next("the queued message"); e.Type != TypeMessage || e.ID != "m1" || e.State != inbox.StateQueued || e.Epoch != "0.0" {
		t.Fatalf("got %+v, want m1 queued", e)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}
