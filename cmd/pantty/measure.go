package main

import (
	"fmt"
	"os"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/measure"
	"github.com/urfave/cli/v2"
)

func measureCommand() *cli.Command {
	return &cli.Command{
		Name:  "measure",
		Usage: "measure harness behaviour on pantty's exact submission path",
		Subcommands: []*cli.Command{{
			Name:  "dispatch",
			Usage: "measure which leading characters dispatch as commands; writes $PANTTY_HOME/facts/<harness>-resident.toml",
			Description: "Runs a corpus through the board door (the guard) and through a raw control path on a throwaway\n" +
				"seat in a temporary PANTTY_HOME on its own tmux socket. The raw /clear control must dispatch, or\n" +
				"nothing is written. Each observation points to its stored artifact.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "harness", Value: "sim", Usage: "harness to measure (any registered harness whose adapter has a measure rig)"},
				&cli.StringFlag{Name: "sigils", Usage: "sim only: the sigils the simulator is configured to dispatch"},
				&cli.StringFlag{Name: "bin", Usage: "claude-code, codex: the harness binary (default: $PANTTY_CLAUDE_BIN / $PANTTY_CODEX_BIN or the harness cache)"},
				&cli.DurationFlag{Name: "revisit", Value: 30 * 24 * time.Hour, Usage: "re-measure after this long"},
				&cli.DurationFlag{Name: "fail-after", Value: 90 * 24 * time.Hour, Usage: "gates fail after this long without a re-measurement"},
			},
			Action: measureDispatch,
		}},
	}
}

func measureDispatch(c *cli.Context) error {
	home, err := homeOf(c)
	if err != nil {
		return err
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	ad, err := seat.AdapterFor(c.String("harness"))
	if err != nil {
		return usageErr("measure dispatch: %v", err)
	}
	rigOf := ad.Caps().Measure
	if rigOf == nil {
		return usageErr("measure dispatch: harness %q cannot be measured (its adapter has no stand-in rig)", ad.Name())
	}
	if c.IsSet("sigils") && ad.Name() != "sim" {
		return usageErr("measure dispatch: --sigils configures the simulator only")
	}
	dir, err := os.MkdirTemp("", "pantty-measure-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	spec := seat.MeasureSpec{Bin: c.String("bin"), Dir: dir}
	if c.IsSet("sigils") {
		v := c.String("sigils")
		spec.Sigils = &v
	}
	t, err := rigOf(spec)
	if err != nil {
		return fmt.Errorf("measure dispatch: %v (or pass --bin)", err)
	}
	if t.Close != nil {
		defer t.Close()
	}
	f, err := measure.Run(home, t, measure.Options{Pantty: pantty, Revisit: c.Duration("revisit"), Fail: c.Duration("fail-after"),
		Progress: func(l string) { fmt.Printf("  %s\n", l) }})
	if err != nil {
		return err
	}
	say("%s: form %s, sigils %q (control dispatched: %v); %d observations, artifacts in %s",
		f.Harness, f.Form, f.Sigils, f.ControlOK, len(f.Observations), f.Artifacts)
	for _, o := range f.Observations {
		status := "reached the model"
		switch {
		case o.Refused != "":
			status = "refused at the door"
		case o.Dispatched:
			status = "DISPATCHED"
		case !o.ReachedModel:
			status = "no outcome seen"
		}
		say("  %-5s %-14s %s", o.Door, o.Name, status)
	}
	return nil
}
