package main

// `pantty events`: the derived event stream a board bridge follows
// (seat/feed; docs/cli.md has the schema and the cursor).

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/seat/feed"
	"github.com/urfave/cli/v2"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:  "events",
		Usage: "print message state changes, seat mode/intent changes and health verdicts as JSON lines, from records only",
		Description: "One JSON object per line (schema v1, docs/cli.md): messages queued, submitted, resubmitted,\n" +
			"processed, failed (with reason); seat mode and intent changes; recover's health verdicts. Each line but\n" +
			"health carries a cursor: keep the last one and resume with --since CURSOR (no line is missed or repeated).\n" +
			"Events are printed in time order once they are --settle old. Exit 0; 2 bad usage or unknown seat;\n" +
			"4 the state root is unreadable.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "seat", Usage: "only this seat, NAME or HOST:NAME (default: every seat, also seats created while following)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new events until interrupted or stdout closes"},
			&cli.StringFlag{Name: "since", Usage: "start after `CURSOR` (from an event line), at an RFC 3339 time, a duration ago (5m, 2h), or now (default: the oldest record)"},
			&cli.DurationFlag{Name: "settle", Value: feed.DefaultSettle, Usage: "hold events until they are this old, so lines come in time order"},
		}, fleetFlags()...),
		Action: eventsAction,
	}
}

func eventsAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("events takes no arguments (one seat: --seat NAME)")
	}
	if name := c.String("seat"); name != "" {
		h, plain, remote, err := hostOf(c, name)
		if err != nil {
			return err
		}
		if remote {
			return fleetEvents(c, []fleet.Host{h}, plain)
		}
	}
	if hosts, err := fleetHosts(c); err != nil || hosts != nil {
		if err != nil {
			return err
		}
		return fleetEvents(c, hosts, c.String("seat"))
	}
	if err := validSeatArg(c.String("seat")); err != nil {
		return err
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	opt := feed.Options{Seat: c.String("seat"), Follow: c.Bool("follow"), Settle: c.Duration("settle")}
	if opt.Settle < 0 {
		return usageErr("--settle %s is negative", opt.Settle)
	}
	if c.IsSet("since") {
		if opt.Since, err = feed.ParseSince(c.String("since"), time.Now()); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = untilOutputClosed(ctx, os.Stdout)
	err = feed.Run(ctx, home, opt, func(e feed.Event) error {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	})
	if errors.Is(err, syscall.EPIPE) {
		return nil // the reader went away: nothing left to do
	}
	return err
}
