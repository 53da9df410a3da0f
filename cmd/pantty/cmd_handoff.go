package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
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
func insideOr(c *cli.Context) (state.Seat, error) {
	return ownSeatTarget(c, c.String("seat"), "handoff "+c.Command.Name)
}

// dropDir is the seat's drop directory when this runs inside an isolated seat
// for that seat itself: its sandbox can reach the driver only through it.
func dropDir(c *cli.Context) string {
	if name := c.String("seat"); name != "" && name != os.Getenv(launch.SeatEnv) {
		return ""
	}
	return os.Getenv(state.DropEnv)
}

// viaDrop hands a request to the seat's driver through its drop directory.
func viaDrop(dir string, r state.DropRequest) error {
	ans, err := state.SendDrop(dir, r)
	if err != nil {
		return err
	}
	say("%s", ans.Detail)
	return nil
}

func handoffNote(c *cli.Context) error {
	text := strings.Join(c.Args().Slice(), " ")
	if text == "" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		if err != nil {
			return err
		}
		text = string(b)
	}
	if dir := dropDir(c); dir != "" {
		return viaDrop(dir, state.DropRequest{Kind: state.DropNote, Text: text})
	}
	s, err := insideOr(c)
	if err != nil {
		return err
	}
	if err := state.ValidateNote(text); err != nil {
		return err
	}
	path, err := s.Handoff().AddNote(text, time.Now())
	if err != nil {
		return fmt.Errorf("%w: %v", state.ErrBadInput, err)
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
	if errors.Is(err, fs.ErrNotExist) {
		return codedError{exitNotFound, fmt.Sprintf("seat %s has no handoff yet: the first is written at its first compaction", s.Name)}
	}
	if err != nil {
		return fmt.Errorf("%w: seat %s: read its handoff: %v", state.ErrUnobservable, s.Name, err)
	}
	fmt.Print(text)
	return nil
}

func handoffRequest(c *cli.Context) error {
	if dir := dropDir(c); dir != "" {
		return viaDrop(dir, state.DropRequest{Kind: state.DropRefresh})
	}
	s, err := insideOr(c)
	if err != nil {
		return err
	}
	if _, live, _ := s.LiveOwner(); !live {
		return fmt.Errorf("seat %s has no live driver to take the request", s.Name)
	}
	return ask(s, state.Request{Kind: state.CtlRefresh}, 30*time.Second)
}
