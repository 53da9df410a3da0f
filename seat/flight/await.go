package flight

import (
	"context"
	"time"
)

// Wait is what one wait on the harness's screen looks for. No transport
// pantty has today announces "the paste is committed" or "the turn
// stopped", so a wait looks at the screen: after Quiet, until Cond held for
// Hold look after look, or Limit (after Quiet) passed. On a transport with
// the pane's own change events (Changes) a look comes when the pane printed
// (and when a Hold is due); without, every Every. With Still, the events
// time the pane's quiet.
type Wait struct {
	Quiet time.Duration // before the first look (the harness redraws and says nothing)
	Every time.Duration // between looks; with change events, the least time between two
	Limit time.Duration // after Quiet: past it the answer is false
	Hold  time.Duration // how long Cond must stay true, look after look, to count (0: one look)
	// Cond is what the screen must show; nil: no look at all, the answer
	// is true once Quiet has passed (a settle bound, nothing to see).
	Cond func(screen string) bool
	// Still, with Cond, ends the wait as soon as Cond holds on a screen
	// taken once the pane has printed nothing for Still: the paste's commit
	// on a harness measured to draw a paste only once an Enter would submit
	// it (harness.Capabilities.PasteQuiet). On a transport with change
	// events (Changes) the quiet is timed from the last event and the pane
	// is looked at only then; without, Cond must hold on an unchanged
	// screen look after look, Every apart, for Still. Hold is not used.
	Still time.Duration
	// Bound makes Limit an upper bound rather than a failure: past it the
	// answer is true whatever the screen showed (paste_settle as a bound:
	// Enter goes then, as it did after the fixed settle, and the Enter
	// retry covers one eaten). With Still or without.
	Bound bool
}

// Changes is a transport whose pane reports its changes: tmux.Conn's
// control client does (%output), a plain tmux client does not.
type Changes interface {
	// Follow turns the change events on until release is called; changed
	// receives (coalesced) whenever the pane prints; ok false: none.
	Follow(ctx context.Context) (changed <-chan struct{}, release func(), ok bool)
}

// stillEvery is how often a Still wait looks on a transport without change
// events, when Every does not say.
const stillEvery = 10 * time.Millisecond

// cmpOr is d, or or when d is not positive.
func cmpOr(d, or time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return or
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
	if w.Still > 0 {
		return awaitStill(t, w)
	}
	if c, ok := t.(Changes); ok {
		if changed, release, ok := c.Follow(context.Background()); ok {
			defer release()
			return awaitChanges(t, w, changed)
		}
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
	return w.Bound
}

// safetyLook is how long a wait on change events goes without a look when
// no event came: the events are the pane's own output, so a screen that
// changed without one is not expected, but a control client that died (its
// Conn falls back to plain clients, which have no events) must not leave a
// wait blind until its limit.
const safetyLook = time.Second

// awaitChanges is Await's look loop on a transport with change events: the
// screen is looked at once, then again only when the pane printed (no
// sooner than Every after the last look, so a spinner does not turn into a
// look per frame), when Cond has held for Hold, or after safetyLook with
// nothing. Past the limit no look counts, as in the timed loop.
func awaitChanges(t Transport, w Wait, changed <-chan struct{}) bool {
	limit := time.Now().Add(w.Limit)
	deadline := time.NewTimer(w.Limit)
	defer deadline.Stop()
	next := time.NewTimer(0) // the next look; fires at once for the first
	defer next.Stop()
	var since, last time.Time // since: Cond holds from then on; last: the last look
	for {
		select {
		case <-deadline.C:
			return w.Bound
		case <-changed:
			next.Reset(max(w.Every-time.Since(last), 0))
			continue
		case <-next.C:
		}
		if !time.Now().Before(limit) {
			return w.Bound
		}
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		screen, err := t.Screen(ctx)
		cancel()
		now := time.Now()
		last = now
		switch {
		case err != nil || !w.Cond(screen):
			since = time.Time{}
		case since.IsZero():
			since = now
		}
		switch {
		case !since.IsZero() && now.Sub(since) >= w.Hold:
			return true
		case !since.IsZero():
			next.Reset(w.Hold - now.Sub(since)) // look again when the hold is due
		default:
			next.Reset(safetyLook)
		}
	}
}

// awaitStill is Await with Still: on the pane's change events where the
// transport has them, else on looks that compare the screen.
func awaitStill(t Transport, w Wait) bool {
	deadline := time.NewTimer(w.Limit)
	defer deadline.Stop()
	look := func() (string, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		defer cancel()
		screen, err := t.Screen(ctx)
		return screen, err == nil && w.Cond(screen)
	}
	if c, ok := t.(Changes); ok {
		changed, release, ok := c.Follow(context.Background())
		defer release()
		if ok {
			// The quiet starts now: a change before Follow is on the
			// screen the first look takes; one after resets the quiet.
			quiet := time.NewTimer(w.Still)
			defer quiet.Stop()
			for {
				select {
				case <-changed:
					quiet.Reset(w.Still)
				case <-quiet.C:
					if _, ok := look(); ok {
						return true
					}
					// Not shown yet: the harness draws it, which is a
					// change, and the quiet starts again from there.
				case <-deadline.C:
					return w.Bound
				}
			}
		}
	}
	var last string
	var since time.Time // when the screen, showing Cond, last changed
	tick := time.NewTicker(cmpOr(w.Every, stillEvery))
	defer tick.Stop()
	for {
		screen, ok := look()
		now := time.Now()
		switch {
		case !ok:
			since = time.Time{}
		case since.IsZero() || screen != last:
			since = now
		case now.Sub(since) >= w.Still:
			return true
		}
		last = screen
		select {
		case <-tick.C:
		case <-deadline.C:
			return w.Bound
		}
	}
}
