package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/urfave/cli/v2"
)

func handoffCommand() *cli.Command {
	return &cli.Command{
		Name:  "handoff",
		Usage: "the seat's handoff notes (materialized before every compaction, re-injected after)",
		Subcommands: []*cli.Command{
			{
				Name:      "note",
				Usage:     "add a procedure note to the next handoff (meant to be run from inside the seat)",
				ArgsUsage: "[TEXT...]  (or the note on stdin)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "seat", Usage: "seat name (default: the seat this runs inside; from inside a seat only that seat)"},
				},
				Action: handoffNote,
			},
			{
				Name:  "request",
				Usage: "ask the driver for a refresh (compaction cycle) at the next turn boundary; meant for the seat itself (refresh policy \"self\")",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "seat", Usage: "seat name (default: the seat this runs inside; from inside a seat only that seat)"},
				},
				Action: handoffRequest,
			},
			{Name: "show", Usage: "print the current handoff", ArgsUsage: "NAME", Action: handoffShow},
		},
	}
}

// insideOr resolves the seat a handoff command is about: --seat, else the seat
// whose process tree this runs in. Inside a seat it may only be that seat: the
// notes and the refresh are the seat's own (ownSeatTarget).
func insideOr(c *cli.Context) (seat.Seat, error) {
	return ownSeatTarget(c, c.String("seat"), "handoff "+c.Command.Name)
}

func handoffNote(c *cli.Context) error {
	s, err := insideOr(c)
	if err != nil {
		return err
	}
	text := strings.Join(c.Args().Slice(), " ")
	if text == "" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		if err != nil {
			return err
		}
		text = string(b)
	}
	if err := seat.ValidateNote(text); err != nil {
		return err
	}
	path, err := s.Handoff().AddNote(text, time.Now())
	if err != nil {
		return fmt.Errorf("%w: %v", seat.ErrBadInput, err)
	}
	say("noted in %s (it goes into the next handoff)", path)
	return nil
}

func handoffShow(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	text, err := s.Handoff().Current()
	if err != nil {
		return fmt.Errorf("seat %s has no handoff yet: %w", s.Name, err)
	}
	fmt.Print(text)
	return nil
}

func handoffRequest(c *cli.Context) error {
	s, err := insideOr(c)
	if err != nil {
		return err
	}
	if _, live, _ := s.LiveOwner(); !live {
		return fmt.Errorf("seat %s has no live driver to take the request", s.Name)
	}
	return ask(s, seat.Request{Kind: seat.CtlRefresh}, 30*time.Second)
}
