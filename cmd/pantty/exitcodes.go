package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// The exit-code table for every command (docs/cli.md repeats it per command).
const (
	exitOK       = 0 // done (including "duplicate id, already stored" with the same text)
	exitFailed   = 1 // failed (the reason on stderr)
	exitBadInput = 2 // bad input or usage (nothing was changed)
	exitRefused  = 3 // refused: another live owner holds the seat (named)
	exitUnknown  = 4 // could not observe: the answer is unknown
	exitNotFound = 5 // no such seat, state root or message (a name or --home to check)
	exitConflict = 6 // the id is stored with a different text: nothing was stored
)

// exitCodes is the table above in words, row for row as docs/cli.md lists it:
// TestEveryDocumentedExitCodeIsReturned checks each row is in the doc and
// runs the binary into each code.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "done (including an id already stored with the same text, and a start of a running seat)"},
	{exitFailed, "failed (the reason on stderr)"},
	{exitBadInput, "bad input or usage: nothing was changed"},
	{exitRefused, "refused: another live owner holds the seat (the holder is named)"},
	{exitUnknown, "could not observe: the answer is unknown"},
	{exitNotFound, "not found: no such seat, state root or message"},
	{exitConflict, "conflict: the id is already stored with a different text (nothing was stored)"},
}

// codedError carries an explicit exit code for errors no sentinel classifies.
type codedError struct {
	code int
	msg  string
}

func (e codedError) Error() string { return e.msg }

func usageErr(format string, a ...any) error {
	return codedError{exitBadInput, fmt.Sprintf(format, a...)}
}

// exitCode maps an error to the table above by its class, never by its text,
// except urfave/cli's own flag errors, which carry no class.
func exitCode(err error) int {
	var ce codedError
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.Is(err, state.ErrUnknownSeat):
		return exitNotFound
	case errors.Is(err, inbox.ErrConflict):
		return exitConflict
	case errors.Is(err, state.ErrBadInput), errors.Is(err, state.ErrBadConfig), errors.Is(err, state.ErrInsideSeat), errors.Is(err, fleet.ErrBadHosts):
		return exitBadInput
	case errors.Is(err, state.ErrOwned):
		return exitRefused
	case errors.Is(err, state.ErrUnobservable):
		return exitUnknown
	case strings.HasPrefix(err.Error(), "flag provided but not defined"),
		strings.HasPrefix(err.Error(), "Required flag"),
		strings.HasPrefix(err.Error(), "invalid value"):
		return exitBadInput
	}
	return exitFailed
}
