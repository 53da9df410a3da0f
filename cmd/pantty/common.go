package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// homeOf resolves the state root from --home / $PANTTY_HOME / the XDG default.
func homeOf(c *cli.Context) (string, error) {
	if h := c.String("home"); h != "" {
		return filepath.Abs(h)
	}
	return seat.DefaultHome()
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

// seatArg opens the seat named by the command's only positional argument.
func seatArg(c *cli.Context, mustExist bool) (seat.Seat, error) {
	if c.NArg() != 1 {
		return seat.Seat{}, usageErr("usage: pantty %s NAME (got %d arguments)", cmdPath(c), c.NArg())
	}
	home, err := homeOf(c)
	if err != nil {
		return seat.Seat{}, err
	}
	if mustExist {
		return seat.Existing(home, c.Args().First())
	}
	return seat.Open(home, c.Args().First())
}

// seatAndID opens the existing seat and message id named by NAME ID (`seat
// retry`, `seat show`).
func seatAndID(c *cli.Context) (seat.Seat, string, error) {
	if c.NArg() != 2 {
		return seat.Seat{}, "", usageErr("usage: pantty %s NAME ID (got %d arguments)", cmdPath(c), c.NArg())
	}
	home, err := homeOf(c)
	if err != nil {
		return seat.Seat{}, "", err
	}
	s, err := seat.Existing(home, c.Args().Get(0))
	return s, c.Args().Get(1), err
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
func ask(s seat.Seat, r seat.Request, timeout time.Duration) error {
	stop := progress(s)
	res, err := s.Ask(r, timeout)
	stop()
	if err != nil {
		return err
	}
	say("%s", res.Detail)
	return nil
}
