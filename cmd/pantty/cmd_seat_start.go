package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
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
	warnOpenModes(s)
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
	// A start of a running seat is done, as systemctl start of a running unit:
	// it names the live holder and changes nothing. --takeover replaces it,
	// --refresh-env records this shell's environment for its next launch.
	if opts.Takeover == "" && !opts.RefreshEnv {
		if o, ok := runningHolder(s); ok {
			return alreadyRunning(s, o)
		}
	}
	p, err := seat.Start(s, opts)
	if errors.Is(err, state.ErrOwned) && opts.Takeover == "" {
		// A start that lost a race to another start: the winner runs the seat.
		if o, ok := runningHolder(s); ok {
			return alreadyRunning(s, o)
		}
	}
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

// warnOpenModes says on stderr when the seat's directory or seat.toml can be
// read or written by other users (a directory made by hand, a copied file): the
// seat's records and its configuration (the command its start runs, env
// values) are the person's only, 0700 and 0600 as seat init makes them.
// pantty does not change modes it did not set; the line says how.
func warnOpenModes(s state.Seat) {
	for _, f := range []struct {
		path string
		want os.FileMode
	}{{s.Dir, 0o700}, {s.ConfigPath(), 0o600}} {
		if fi, err := os.Stat(f.path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			fmt.Fprintf(os.Stderr, "pantty: warning: %s is %#o: other users can read it (chmod %o %s)\n", f.path, fi.Mode().Perm(), f.want, f.path)
		}
	}
}

// runningHolder returns the live holder of a seat meant to run. A live holder
// of a seat meant to be stopped is a `seat stop` (or drop, rm) at work, not a
// running seat: a start then is refused naming it (exit 3), not "already
// running".
func runningHolder(s state.Seat) (state.Owner, bool) {
	o, live, err := s.LiveOwner()
	if err != nil || !live {
		return o, false
	}
	if in, err := s.IntentFile().Read(); err == nil && in.Want == state.IntentStopped {
		return o, false
	}
	return o, true
}

// alreadyRunning is the answer to a start of a seat whose driver is live: exit
// 0, the holder named, and the one command that would replace it.
func alreadyRunning(s state.Seat, o state.Owner) error {
	say("seat %s is already running: %s; nothing changed ('pantty seat start %s --takeover %s' replaces that driver)", s.Name, o, s.Name, o.Holder)
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
