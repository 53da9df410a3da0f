package driver

import (
	"time"
)

// inputReadyLimit bounds the look for the input box after SessionStart.
const inputReadyLimit = 5 * time.Second

// paneLook is what one watch looks for.
type paneLook struct {
	quiet time.Duration // before the first look (the harness redraws and says nothing)
	every time.Duration // between looks: a pane announces no change
	limit time.Duration // after quiet: past it the answer is false
	hold  time.Duration // how long cond must stay true, look after look, to count (0: one look)
	cond  func(screen string) bool
}

// paneAnswer is one watch's answer, for the launch it watched.
type paneAnswer struct {
	launch time.Time // Driver.launchAt when the watch began
	ok     bool
	then   func(ok bool)
}

// watchPane starts a look at the pane; then runs on the loop with its answer,
// unless the harness was launched again meanwhile (the answer is about a pane
// that is gone, and the new launch watches for itself).
func (d *Driver) watchPane(l paneLook, then func(ok bool)) {
	if d.paneDone == nil {
		d.paneDone = make(chan paneAnswer, 4)
	}
	tm, pane, launch, done := d.tm, d.sess.PaneID, d.launchAt, d.paneDone
	go func() {
		time.Sleep(l.quiet) // the watcher's own wait, not the loop's
		deadline := time.Now().Add(l.limit)
		ok := false
		var since time.Time // when cond began to hold, look after look
		// No look after the limit: what the pane shows then is not an
		// answer within it (a turn that ends on its own just after a
		// cancel's limit did not stop for the Escape).
		for now := time.Now(); now.Before(deadline); now = time.Now() {
			ctx, cancel := d.ctx()
			screen, err := tm.Capture(ctx, pane)
			cancel()
			switch {
			case err != nil || !l.cond(screen):
				since = time.Time{}
			case since.IsZero():
				since = now
			}
			if ok = !since.IsZero() && now.Sub(since) >= l.hold; ok {
				break
			}
			time.Sleep(l.every)
		}
		done <- paneAnswer{launch: launch, ok: ok, then: then}
	}()
}

// onPaneAnswer runs a watch's continuation on the loop.
func (d *Driver) onPaneAnswer(a paneAnswer) {
	if !a.launch.Equal(d.launchAt) {
		return
	}
	a.then(a.ok)
}
