package flight

import (
	"testing"
	"time"
)

// TestLooksComeWithTheChanges: on a transport with change events a wait
// looks when the pane printed, not on a timer: the screen that ends it is
// seen within a few milliseconds of its event with a handful of looks, where
// the timed loop (no events) looks every Every all along. A Hold is judged
// by a look when it is due; a screen that changed with no event is still
// seen, by the safety look.
func TestLooksComeWithTheChanges(t *testing.T) {
	done := func(s string) bool { return s == "done" }
	run := func(events bool, w Wait, change func(d *drawing)) (ok bool, took time.Duration, looks int) {
		d := newDrawing(events, "busy")
		answer := make(chan bool, 1)
		go func() { answer <- Await(d, w) }()
		time.Sleep(200 * time.Millisecond)
		begin := time.Now()
		change(d)
		ok = <-answer
		d.mu.Lock()
		defer d.mu.Unlock()
		return ok, time.Since(begin), d.looks
	}
	signal := func(d *drawing) { d.set("done") }
	w := Wait{Every: 5 * time.Millisecond, Limit: 5 * time.Second, Cond: done}

	ok, took, looks := run(true, w, signal)
	if !ok || took > 500*time.Millisecond || looks > 3 {
		t.Errorf("with events: ok %v after %s with %d looks; want it seen at its event with at most 3 looks", ok, took, looks)
	}
	ok2, took2, timed := run(false, w, signal)
	// The timed loop looks every Every all along: at least a few times in
	// the 200 ms before the change even when the machine oversleeps (8
	// looks under the full suite's load, 39 alone).
	if !ok2 || timed <= looks+1 {
		t.Errorf("without events: ok %v with %d looks; the timed loop should have looked every %s, far more than the %d on events (the comparison proves nothing)", ok2, timed, w.Every, looks)
	}
	t.Logf("the ending screen seen %s after its change with %d looks on events; %s with %d looks on a %s timer", took, looks, took2, timed, w.Every)

	h := w
	h.Hold = 60 * time.Millisecond
	ok, took, looks = run(true, h, signal)
	if !ok || took < h.Hold || took > h.Hold+500*time.Millisecond || looks > 4 {
		t.Errorf("a hold with events: ok %v after %s with %d looks; want it held %s, judged by a look when due", ok, took, looks, h.Hold)
	}

	silent := func(d *drawing) { d.mu.Lock(); d.screen = "done"; d.mu.Unlock() }
	ok, took, _ = run(true, w, silent)
	if !ok || took > safetyLook+600*time.Millisecond {
		t.Errorf("a change with no event: ok %v after %s; want it seen by the safety look (%s)", ok, took, safetyLook)
	}

	l := w
	l.Limit = 100 * time.Millisecond
	if ok, _, _ := run(true, l, func(*drawing) {}); ok {
		t.Error("nothing changed and the limit passed: the answer is true")
	}
}
