package seat

import "errors"

// Sentinel errors for the classes callers branch on; the CLI maps each to one
// exit code (see docs/cli.md). ErrBadInput lives beside the message rules.
var (
	// ErrOwned: a live driver holds the seat's inbox; the error text names the holder.
	ErrOwned = errors.New("seat is owned by a live driver")
	// ErrUnknownSeat: no seats/<name>/seat.toml exists.
	ErrUnknownSeat = errors.New("unknown seat")
	// ErrUnobservable: the answer could not be observed (tmux timed out, state unreadable).
	ErrUnobservable = errors.New("could not observe")
	// ErrInsideSeat: a steering command was run from inside a seat's own process tree.
	ErrInsideSeat = errors.New("refused inside a seat")
)
