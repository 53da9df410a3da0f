package main

import (
	"fmt"
	"strings"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/harness"
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
func seatAdapter(s seat.Seat) (config.Config, harness.Adapter, error) {
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
	if o, live, _ := s.LiveOwner(); live {
		// The harness rewrites its own files while it runs; a write now could be lost.
		return fmt.Errorf("%w: seat %s is held by %s: stop it first ('pantty seat stop %s')", seat.ErrOwned, s.Name, o.Holder, s.Name)
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
