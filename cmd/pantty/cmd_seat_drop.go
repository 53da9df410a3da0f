package main

// `seat drop` withdraws queued messages; `seat rm` removes a stopped seat.

import (
	"fmt"

	"github.com/pantty/pantty/seat"
	"github.com/urfave/cli/v2"
)

func seatDropCommand() *cli.Command {
	return &cli.Command{
		Name: "drop",
		Usage: "withdraw queued messages before delivery (never one in flight): each becomes failed with reason dropped, " +
			"visible in seat inbox and events; 'seat retry' queues one again",
		ArgsUsage: "NAME ID... | NAME --queued",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "queued", Usage: "every queued board message of the seat"}},
		Action:    seatDrop,
	}
}

func seatDrop(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) < 1 || (len(args) == 1) == !c.Bool("queued") {
		return usageErr("usage: pantty %s NAME ID... | pantty %s NAME --queued", cmdPath(c), cmdPath(c))
	}
	s, err := existingSeat(c, args[0])
	if err != nil {
		return err
	}
	ids := args[1:]
	for _, id := range ids {
		if err := storedID(s, id); err != nil {
			return err
		}
	}
	w, err := seat.Withdraw(s, ids, c.Bool("queued"))
	if err != nil {
		return err
	}
	if len(w.Left) > 0 {
		return codedError{exitFailed, fmt.Sprintf("seat %s: %s: only a queued message can be dropped", s.Name, w.Summary())}
	}
	say("seat %s: %s", s.Name, w.Summary())
	return nil
}

func seatRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove a seat no live driver holds: its directory and every record in it (the workdir stays); refused, exit 3, while it runs",
		ArgsUsage: "NAME",
		Action:    seatRm,
	}
}

func seatRm(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	work := ""
	if cfg, err := s.LoadConfig(); err == nil {
		work = cfg.Workdir
	}
	if err := seat.Remove(s); err != nil {
		return err
	}
	if work != "" {
		say("seat %s removed (%s); its workdir %s is untouched", s.Name, s.Dir, work)
	} else {
		say("seat %s removed (%s)", s.Name, s.Dir)
	}
	return nil
}
