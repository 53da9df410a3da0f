package main

import (
	"fmt"
	"os"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/harness"
	"github.com/urfave/cli/v2"
)

func seatStart(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	if err := startGates(s); err != nil {
		return err
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	// The command a refusal names is this one again: a refused start changed
	// nothing, so the same holder (--takeover) still holds the seat.
	again := "pantty seat start " + s.Name
	if h := c.String("takeover"); h != "" {
		again += " --takeover " + h
	}
	if c.Bool("refresh-env") {
		again += " --refresh-env"
	}
	opts := seat.StartOptions{Takeover: c.String("takeover"), RefreshEnv: c.Bool("refresh-env"), Pantty: pantty,
		// A seat that cannot work is refused before anything changes: a
		// pass_env variable missing, a home prepare-home would change.
		Check: func(cfg config.Config) error {
			return harness.CanWork(s, cfg, os.Environ(), c.Bool("refresh-env"), again)
		}}
	if isTerminal(os.Stderr) {
		opts.Progress = func(line string) { fmt.Fprintf(os.Stderr, "  %s …\n", line) }
	}
	p, err := seat.Start(s, opts)
	if err != nil {
		return err
	}
	if p.State == seat.StateEnvRecorded {
		say("seat %s runs (holder %s): recorded this shell's environment in launch-env.toml for its next launch; the live harness keeps its own until then ('pantty seat stop %s' and start to apply it now)", s.Name, p.Holder, s.Name)
		return nil
	}
	how := "started"
	if p.Adopted {
		how = "adopted its live harness"
	}
	say("seat %s %s: holder %s, session %s", s.Name, how, p.Holder, p.Session)
	return nil
}

func seatStop(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	if err := seat.Stop(s); err != nil {
		return err
	}
	say("seat %s stopped (state kept in %s)", s.Name, s.Dir)
	return nil
}
