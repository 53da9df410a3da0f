package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// steered resolves the seat a steering command names (NAME [-- REST...]):
// it must exist and a live driver must be there to act (only the driver writes
// to the pane). Callers inside a seat were refused before (callers.go).
func steered(c *cli.Context, what string) (state.Seat, []string, error) {
	args := c.Args().Slice()
	if len(args) < 1 {
		return state.Seat{}, nil, usageErr("usage: pantty %s %s", what, c.Command.ArgsUsage)
	}
	s, err := existingSeat(c, args[0])
	if err != nil {
		return s, nil, err
	}
	rest := args[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if _, live, _ := s.LiveOwner(); !live {
		return s, nil, fmt.Errorf("seat %s has no live driver to act on %s (start it first)", s.Name, what)
	}
	return s, rest, nil
}

func seatCmd(c *cli.Context) error {
	s, rest, err := steered(c, "seat command")
	if err != nil {
		return err
	}
	if len(rest) == 0 || !strings.HasPrefix(rest[0], "/") {
		return usageErr("a command starts with '/': pantty seat command NAME -- /compact [ARGS]")
	}
	_, ad, err := seatAdapter(s)
	if err != nil {
		return err
	}
	cmd, err := harness.NewCommand(ad, rest[0], strings.Join(rest[1:], " "))
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		return usageErr("--wait %s: want a positive duration (e.g. 30s)", wait)
	}
	return ask(s, state.Request{Kind: state.CtlCommand, Command: cmd.Name(), Args: cmd.Args(), Wait: config.Duration{Duration: wait}},
		wait+hookwire.CommandAcceptWindow+30*time.Second)
}

// waitFlag bounds how long a command waits for the seat to be free (no turn
// running, an empty input box) before it is refused unsent.
func waitFlag() cli.Flag {
	return &cli.DurationFlag{Name: "wait", Value: hookwire.DefaultCommandWait,
		Usage: "how long to wait for the seat to be idle with an empty input box before refusing, unsent"}
}

func seatCancel(c *cli.Context) error {
	s, rest, err := steered(c, "seat cancel")
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("seat cancel takes only the seat NAME")
	}
	return ask(s, state.Request{Kind: state.CtlCancel}, 30*time.Second)
}

func seatRetry(c *cli.Context) error {
	s, id, err := seatAndID(c)
	if err != nil {
		return err
	}
	if err := storedID(s, id); err != nil {
		return err
	}
	if err := seat.Retry(s, id); err != nil {
		return err
	}
	say("re-queued %s", id)
	return nil
}

func seatCompact(c *cli.Context) error {
	s, rest, err := steered(c, "seat compact")
	if err != nil {
		return err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		return usageErr("--wait %s: want a positive duration (e.g. 30s)", wait)
	}
	return ask(s, state.Request{Kind: state.CtlCompact, Args: strings.Join(rest, " "), Wait: config.Duration{Duration: wait}},
		wait+cfg.Compaction.Timeout.Duration+time.Minute)
}

func seatProbe(c *cli.Context) error {
	s, rest, err := steered(c, "seat probe")
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("seat probe takes only the seat NAME")
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	return ask(s, state.Request{Kind: state.CtlProbe}, cfg.TurnCeiling.Duration+time.Minute)
}
