package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func seatInit(c *cli.Context) error {
	s, err := seatArg(c, false)
	if err != nil {
		return err
	}
	env := map[string]string{}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("--env %q: want KEY=VALUE", kv)
		}
		env[k] = v
	}
	if err := seat.InitConfig(s, c.String("harness"), c.String("workdir"), env); err != nil {
		return err
	}
	say("wrote %s (every key listed with its comment and default; edit it, then 'pantty seat start %s')", s.ConfigPath(), s.Name)
	if h := c.String("harness"); h != "sim" {
		say("running a real %s seat (API key or login, base URL, first-run dialogs, permissions, schedulers): docs/real-seats.md; 'pantty seat prepare-home %s' answers the first-run dialogs ahead", h, s.Name)
	}
	return nil
}

// seatAdapter loads the seat's config and the adapter of its harness.
func seatAdapter(s state.Seat) (config.Config, harness.Adapter, error) {
	cfg, err := s.LoadConfig()
	if err != nil {
		return cfg, nil, err
	}
	ad, err := harness.AdapterFor(cfg.Harness)
	return cfg, ad, err
}

// seatPrepareHome exposes the adapter's PrepareSeatHome: what tests and
// `measure` did to start a harness without its first-run dialogs, for a person
// setting up a real seat.
func seatPrepareHome(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	cfg, ad, err := seatAdapter(s)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		return prepareHomeDryRun(s, cfg, ad) // writes nothing: a running seat may be asked too
	}
	if o, live, _ := s.LiveOwner(); live {
		// The harness rewrites its own files while it runs; a write now could be lost.
		return fmt.Errorf("%w: seat %s is held by %s: stop it first ('pantty seat stop %s')", state.ErrOwned, s.Name, o.Holder, s.Name)
	}
	prepare := ad.Caps().PrepareSeatHome
	if prepare == nil {
		say("the %s harness asks no first-run questions: nothing to prepare", cfg.Harness)
		return nil
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	wrote, err := prepare(s, cfg, pantty)
	if err != nil {
		return err
	}
	for _, l := range wrote {
		say("%s", l)
	}
	return nil
}

// prepareHomeDryRun lists what prepare-home would change in a home that is
// not the seat's own (the adapter's HomeUnprepared, the same function `seat
// start` refuses on), from the environment the next launch gets, and writes
// nothing.
func prepareHomeDryRun(s state.Seat, cfg config.Config, ad harness.Adapter) error {
	unprepared := ad.Caps().HomeUnprepared
	if unprepared == nil {
		say("the %s home is the seat's own and is written at every launch: nothing of yours would change", cfg.Harness)
		return nil
	}
	env, _, err := launch.PlannedEnv(s, cfg, os.Environ(), false, ad.Env(s, cfg))
	if err != nil {
		return err
	}
	todo, err := unprepared(s, cfg, env)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		say("nothing would change: the %s home is prepared (pantty seat start %s)", cfg.Harness, s.Name)
		return nil
	}
	for _, t := range todo {
		say("would change: %s", t)
	}
	if _, live, _ := s.LiveOwner(); live {
		say("nothing written; the seat runs, so stop it to write it (the previous file is kept beside it): pantty seat stop %s && pantty seat prepare-home %s", s.Name, s.Name)
		return nil
	}
	say("nothing written; to write it (the previous file is kept beside it): pantty seat prepare-home %s", s.Name)
	return nil
}
