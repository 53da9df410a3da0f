package flight

import (
	"context"
	"time"
)

// Wait is what one wait on the harness's screen looks for. No transport
// pantty has today announces "the paste is committed" or "the turn
// stopped", so a wait looks at the screen: after Quiet, every Every, until
// Cond held for Hold look after look, or Limit (after Quiet) passed.
type Wait struct {
	Quiet time.Duration // before the first look (the harness redraws and says nothing)
	Every time.Duration // between looks
	Limit time.Duration // after Quiet: past it the answer is false
	Hold  time.Duration // how long Cond must stay true, look after look, to count (0: one look)
	// Cond is what the screen must show; nil: no look at all, the answer
	// is true once Quiet has passed (a settle bound, nothing to see).
	Cond func(screen string) bool
}

// lookTimeout bounds one look at the screen.
const lookTimeout = 10 * time.Second

// Await waits as w says and answers whether Cond held. It sleeps between
// looks, so it runs where waiting blocks nothing: the driver runs it in a
// pane watch's goroutine and takes the answer on its loop as an event;
// `pantty measure`'s raw path, which has no loop, calls it directly.
func Await(t Transport, w Wait) bool {
	time.Sleep(w.Quiet) // the waiter's own time, never a loop's
	if w.Cond == nil {
		return true
	}
	deadline := time.Now().Add(w.Limit)
	var since time.Time // when Cond began to hold, look after look
	// No look after the limit: what the screen shows then is not an answer
	// within it (a turn that ends on its own just after a cancel's limit did
	// not stop for the Escape).
	for now := time.Now(); now.Before(deadline); now = time.Now() {
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		screen, err := t.Screen(ctx)
		cancel()
		switch {
		case err != nil || !w.Cond(screen):
			since = time.Time{}
		case since.IsZero():
			since = now
		}
		if !since.IsZero() && now.Sub(since) >= w.Hold {
			return true
		}
		time.Sleep(w.Every)
	}
	return false
}
