package driver

import (
	"time"

	"github.com/pantty/pantty/seat/flight"
)

// inputReadyLimit bounds the look for the input box after SessionStart.
const inputReadyLimit = 5 * time.Second

// paneAnswer is one watch's answer, for the launch it watched.
type paneAnswer struct {
	launch time.Time // Driver.launchAt when the watch began
	ok     bool
	then   func(ok bool)
}

// watchPane waits on the pane as w says (flight.Await, in a goroutine of
// its own: the loop goes on meanwhile), then runs then on the loop with the
// answer, unless the harness was launched again meanwhile (the answer is
// about a pane that is gone, and the new launch watches for itself).
func (d *Driver) watchPane(w flight.Wait, then func(ok bool)) {
	if d.paneDone == nil {
		d.paneDone = make(chan paneAnswer, 4)
	}
	pane, launch, done := d.pane(), d.launchAt, d.paneDone
	d.watching++
	go func() { done <- paneAnswer{launch: launch, ok: flight.Await(pane, w), then: then} }()
}

// onPaneAnswer runs a watch's continuation on the loop.
func (d *Driver) onPaneAnswer(a paneAnswer) {
	d.watching--
	if !a.launch.Equal(d.launchAt) {
		return
	}
	a.then(a.ok)
}
