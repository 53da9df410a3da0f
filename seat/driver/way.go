package driver

import (
	"context"
	"errors"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/flight"
)

// way is how the driver gets a guarded message to the harness and stops its
// turn: the seam between the driver's decisions (what goes next, what the
// evidence says) and the harness's input. paneWay pastes into the TUI in
// the seat's tmux pane; asWay submits turns to Codex's app server
// (seat.toml transport = "app-server", appserver.go). Both answer on the
// loop: nothing here blocks it.
type way interface {
	// submit sends fl's submission, whose durable record is a (the
	// write-ahead rule: flight.WriteAhead ran first). Its evidence comes as
	// events; a failure is settled on the loop.
	submit(fl *delivery, sub guard.Submission, a flight.Ahead)
	// cancel stops the turn of c's message, verifies it stopped and settles
	// the message (cancelFinish), or answers why not (cancelEnd).
	cancel(c *cancelRun)
}

// paneWay is the tmux path: the flight package's paste, settle and Enter,
// the Escape for a cancel (submit.go, cancel.go).
type paneWay struct{ d *Driver }

// way is the seat's transport.
func (d *Driver) way() way {
	if d.onAppServer() {
		return asWay{d}
	}
	return paneWay{d}
}

// onAppServer reports whether the seat runs on its harness's app server
// (seat.toml transport = "app-server") rather than in a tmux pane.
func (d *Driver) onAppServer() bool {
	return d.Cfg.Transport == config.TransportAppServer
}

// threadIdle reports whether the app server runs and no turn runs on the
// seat's thread (turn/start on a busy thread steers the running turn).
func (d *Driver) threadIdle() bool {
	return d.as != nil && !d.as.connGone && d.as.turn == ""
}

// errNoPane is every pane operation of a seat on its app server.
var errNoPane = errors.New("the seat runs on its app server: it has no pane")

// noPane is the pane of a seat on its app server: there is none, and a
// look or a key that reaches for it fails (never a tmux target "" that
// tmux would match to another session's pane).
type noPane struct{}

func (noPane) Capture(context.Context, string) (string, error)   { return "", errNoPane }
func (noPane) SendKeys(context.Context, string, ...string) error { return errNoPane }
func (noPane) Paste(context.Context, string, []byte) error       { return errNoPane }
