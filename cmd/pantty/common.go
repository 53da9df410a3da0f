package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// homeOf resolves the state root from --home / $PANTTY_HOME / the XDG default.
func homeOf(c *cli.Context) (string, error) {
	if h := c.String("home"); h != "" {
		return filepath.Abs(h)
	}
	return state.DefaultHome()
}

// stateRoot is homeOf for a command that reads an existing state root: a
// missing one (a mistyped --home or PANTTY_HOME) is "not found", exit 5, never
// an empty list with exit 0, so a script can tell it from a root with no seats.
func stateRoot(c *cli.Context) (string, error) {
	home, err := homeOf(c)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", codedError{exitNotFound, fmt.Sprintf("no state root at %s: check --home or PANTTY_HOME (the first seat init creates one)", home)}
	case err != nil:
		return "", codedError{exitUnknown, fmt.Sprintf("state root %s: %v", home, err)}
	case !fi.IsDir():
		return "", codedError{exitNotFound, fmt.Sprintf("no state root at %s: it is a file, not a directory (check --home or PANTTY_HOME)", home)}
	}
	return home, nil
}

// panttyPath is the absolute path of this binary: the driver, the pane's exec
// step and every hook run it again.
func panttyPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// homeAndPantty is what a verb that starts pantty processes (a driver, the
// scheduler's sweep) needs: the state root and this binary's path.
func homeAndPantty(c *cli.Context) (home, pantty string, err error) {
	if home, err = homeOf(c); err != nil {
		return "", "", err
	}
	pantty, err = panttyPath()
	return home, pantty, err
}

// seatArg opens the seat named by the command's only positional argument.
func seatArg(c *cli.Context, mustExist bool) (state.Seat, error) {
	if c.NArg() != 1 {
		return state.Seat{}, usageErr("usage: pantty %s NAME (got %s)", cmdPath(c), arguments(c.NArg()))
	}
	if mustExist {
		return existingSeat(c, c.Args().First())
	}
	home, err := homeOf(c)
	if err != nil {
		return state.Seat{}, err
	}
	return state.Open(home, c.Args().First())
}

// validSeatArg checks an optional seat name (status [NAME], events --seat):
// a bad one is bad input before the state root is looked at.
func validSeatArg(name string) error {
	if name == "" {
		return nil
	}
	return state.ValidateName(name)
}

// existingSeat opens the existing seat name under the state root: a bad name
// is bad input (exit 2) before the root is looked at, then a missing root or
// seat is not found (exit 5).
func existingSeat(c *cli.Context, name string) (state.Seat, error) {
	if err := state.ValidateName(name); err != nil {
		return state.Seat{}, err
	}
	home, err := stateRoot(c)
	if err != nil {
		return state.Seat{}, err
	}
	return state.Existing(home, name)
}

// seatAndID opens the existing seat and message id named by NAME ID (`seat
// retry`, `seat show`).
func seatAndID(c *cli.Context) (state.Seat, string, error) {
	if c.NArg() != 2 {
		return state.Seat{}, "", usageErr("usage: pantty %s NAME ID (got %s)", cmdPath(c), arguments(c.NArg()))
	}
	s, err := existingSeat(c, c.Args().Get(0))
	return s, c.Args().Get(1), err
}

// arguments counts positional arguments in words: "1 argument", "3 arguments".
func arguments(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

// retention says how long a final message is kept, the way a person says it.
func retention() string {
	if d := seat.MessageRetention; d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return seat.MessageRetention.String()
}

// noMessage is the "not found" answer (exit 5) for a message id the seat does
// not have.
func noMessage(s state.Seat, id string) error {
	return codedError{exitNotFound, fmt.Sprintf("no message %q in seat %q (never sent, or pruned after %s)", id, s.Name, retention())}
}

// storedID checks a message id named on the command line: a malformed id is
// bad input (exit 2), one the seat does not have is not found (exit 5).
func storedID(s state.Seat, id string) error {
	if !guard.ValidID(id) {
		return usageErr("bad message id %q", id)
	}
	if _, err := os.Lstat(s.MsgPath(id)); errors.Is(err, fs.ErrNotExist) {
		return noMessage(s, id)
	}
	return nil
}

// cmdPath is the command's whole name as a user types it (`seat retry`, not
// `retry`), so a usage line pastes and runs.
func cmdPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		// The app's own root command is in the lineage too: its name is not typed.
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name && (len(names) == 0 || names[0] != x.Command.Name) {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// isTerminal reports whether f is a terminal: progress lines and colour only then.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

func say(format string, a ...any) { fmt.Fprintf(os.Stdout, format+"\n", a...) }

// ask sends a request to the seat's driver and prints the driver's answer; on
// a terminal the driver's phases are shown while it works.
func ask(s state.Seat, r state.Request, timeout time.Duration) error {
	stop := progress(s)
	res, err := s.Ask(r, timeout)
	stop()
	if err != nil {
		return err
	}
	say("%s", res.Detail)
	return nil
}
