package feed

import (
	"context"
	"strings"
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

// An event's settle time is judged on the feed's clock: an hour's settle has
// passed on a clock two hours on, and the message's event is printed (on
// the wall clock it was held, its record only just written).
func TestSettleIsJudgedOnTheFeedsClock(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s, err := state.Open(home, "clock")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(s, "sim", t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := s.Enqueue(guard.Message{ID: "m1", Text: "x"}, 0, t0); err != nil {
		t.Fatal(err)
	}
	var got []string
	opt := Options{Settle: time.Hour, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
	if err := Run(context.Background(), home, opt, func(e Event) error {
		got = append(got, e.Seat+" "+e.ID+" "+e.State)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "; ") != "clock m1 queued" {
		t.Fatalf("printed %q, want the queued event once the settle passed on the feed's clock", got)
	}
}
