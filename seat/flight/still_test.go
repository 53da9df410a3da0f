package flight

import (
	"context"
	"sync"
	"testing"
	"time"
)

// drawing is a transport whose pane changes when the test says: set
// shows a screen and, with events, wakes the follower.
type drawing struct {
	screens
	events  bool
	changed chan struct{}
	mu      sync.Mutex
	screen  string
	looks   int
}

func newDrawing(events bool, screen string) *drawing {
	return &drawing{events: events, changed: make(chan struct{}, 1), screen: screen}
}

func (d *drawing) Screen(context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.looks++
	return d.screen, nil
}

func (d *drawing) set(screen string) {
	d.mu.Lock()
	d.screen = screen
	d.mu.Unlock()
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

func (d *drawing) Follow(context.Context) (<-chan struct{}, func(), bool) {
	if !d.events {
		return nil, func() {}, false
	}
	return d.changed, func() {}, true
}

var shows = Wait{Limit: 2 * time.Second, Cond: box.Shows, Still: 30 * time.Millisecond, Bound: true}

// TestStillEndsOnceShownAndQuiet: with change events and without, the wait
// ends once the box shows text and the pane stopped changing, long before
// the bound; while the pane keeps changing it does not end, even with the
// text shown.
func TestStillEndsOnceShownAndQuiet(t *testing.T) {
	w := shows
	w.Still = 80 * time.Millisecond
	for _, events := range []bool{true, false} {
		// A trial proves something only if the test itself redrew the pane
		// more often than Still: under a CPU load a 5 ms sleep can oversleep
		// past it, and then the pane really was quiet. Such a trial is run
		// again, never judged.
		for trial := 1; ; trial++ {
			ended, quietFrom, began, gap := stillTrial(events, w)
			if gap >= w.Still/2 {
				if trial == 5 {
					t.Fatalf("events %v: the test could not redraw the pane every %s in 5 trials (gap %s)", events, w.Still/2, gap)
				}
				continue
			}
			if ended.IsZero() {
				t.Fatalf("events %v: no end", events)
			}
			if ended.Before(quietFrom) {
				t.Fatalf("events %v: the wait ended %s after it began, while the pane was still changing", events, ended.Sub(began))
			}
			if ended.Sub(quietFrom) > 500*time.Millisecond {
				t.Fatalf("events %v: ended %s after the pane went quiet", events, ended.Sub(quietFrom))
			}
			break
		}
	}
}

// stillTrial shows the text, redraws the pane for 200 ms, then lets it go
// quiet, and answers when the wait ended (zero: not within 3 s), when the
// pane went quiet, when the wait began and the longest gap between redraws.
func stillTrial(events bool, w Wait) (ended, quietFrom, began time.Time, gap time.Duration) {
	d := newDrawing(events, "> ")
	done := make(chan time.Time, 1)
	began = time.Now()
	go func() { Await(d, w); done <- time.Now() }()
	time.Sleep(20 * time.Millisecond)
	last := time.Now()
	for i := range 40 {
		d.set("> text" + string(rune('a'+i)))
		now := time.Now()
		gap = max(gap, now.Sub(last))
		last = now
		time.Sleep(5 * time.Millisecond)
	}
	quietFrom = time.Now()
	gap = max(gap, quietFrom.Sub(last))
	select {
	case ended = <-done:
	case <-time.After(3 * time.Second):
	}
	return ended, quietFrom, began, gap
}

// TestStillIsABound: a box that never shows the text ends the wait at the
// limit, true with Bound (Enter goes, as after the fixed settle) and false
// without.
func TestStillIsABound(t *testing.T) {
	for _, bound := range []bool{true, false} {
		w := shows
		w.Limit, w.Bound = 150*time.Millisecond, bound
		began := time.Now()
		if got := Await(newDrawing(true, "> "), w); got != bound {
			t.Fatalf("bound %v: answer %v", bound, got)
		}
		if took := time.Since(began); took < w.Limit {
			t.Fatalf("ended after %s, before the limit", took)
		}
	}
}

// TestStillLooksOnlyWhenQuiet: with change events the pane is looked at once
// per quiet spell, not on a timer.
func TestStillLooksOnlyWhenQuiet(t *testing.T) {
	d := newDrawing(true, "> text")
	if !Await(d, shows) {
		t.Fatal("no")
	}
	if d.looks != 1 {
		t.Fatalf("%d looks, want 1", d.looks)
	}
}
