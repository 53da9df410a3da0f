package state

import (
	"errors"

	"github.com/pantty/pantty/internal/guard"
)

// Sentinel errors for the classes callers branch on; the CLI maps each to one
// exit code (see docs/cli.md).
var (
	// ErrBadInput: the caller's input was refused (exit 2). It is the guard's
	// own sentinel, the same value, so a message the guard refuses and any
	// other bad input are one class for errors.Is.
	ErrBadInput = guard.ErrBadInput
	// ErrOwned: a live driver holds the seat's inbox; the error text names the holder.
	ErrOwned = errors.New("seat is owned by a live driver")
	// ErrUnknownSeat: no seats/<name>/seat.toml exists.
	ErrUnknownSeat = errors.New("unknown seat")
	// ErrUnobservable: the answer could not be observed (tmux timed out, state unreadable).
	ErrUnobservable = errors.New("could not observe")
	// ErrInsideSeat: a steering command was run from inside a seat's own process tree.
	ErrInsideSeat = errors.New("refused inside a seat")
)
