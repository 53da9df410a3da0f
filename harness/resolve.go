package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// NewCommand builds a command the adapter allows (guard.NewCommand with the
// adapter's allow-list and bare commands), or refuses.
func NewCommand(a Adapter, name, args string) (guard.Command, error) {
	return guard.NewCommand(CommandRules(a), name, args)
}

// CommandRules is the adapter's part of the command door.
func CommandRules(a Adapter) guard.CommandRules {
	r := guard.CommandRules{Harness: a.Name(), Allowed: a.Commands()}
	r.Bare = a.Caps().BareCommands
	r.Words = a.Caps().CommandWords
	return r
}

// FactsFor returns the dispatch predicate the guard must use for a seat: a local
// measurement when one exists (it takes precedence), else the adapter's shipped
// facts. A local file that is corrupt is an error, never silently skipped.
func FactsFor(home string, a Adapter, shape string) (guard.DispatchFacts, string, error) {
	f, err := state.LoadFacts(home, a.Name(), shape)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return a.Facts(), "shipped with pantty", nil
	case err != nil:
		return guard.DispatchFacts{}, "", fmt.Errorf("dispatch facts: %w", err)
	case !f.ControlOK:
		return guard.DispatchFacts{}, "", fmt.Errorf("dispatch facts %s: its control did not dispatch, so the measurement proves nothing; re-measure", state.FactsPath(home, a.Name(), shape))
	}
	return guard.DispatchFacts{Form: f.Form, Sigils: f.Sigils}, "measured " + f.AsOf.Format("2006-01-02") + " (" + state.FactsPath(home, a.Name(), shape) + ")", nil
}

// ResolveAuthority decides what the next launch of ad's harness gives the
// model (launch.DecideAuthority), with the harness's credential files and its
// sandbox probe taken from its capabilities: its own sandbox's, else pantty's
// jail for a harness that runs in it (Capabilities.Jail).
func ResolveAuthority(ad Adapter, s state.Seat, c config.Config, env map[string]string, now time.Time) (state.Authority, error) {
	caps := ad.Caps()
	sb := launch.Sandbox{Harness: ad.Name()}
	if caps.Secrets != nil {
		sb.Secrets = caps.Secrets(s, c)
	}
	switch {
	case caps.ProbeIsolation != nil:
		sb.Probe = func(env map[string]string) (string, error) { return caps.ProbeIsolation(s, c, env) }
	case caps.Jail != nil:
		sb.Probe = func(env map[string]string) (string, error) {
			if err := jail.CheckWritable(s, caps.Jail(s, c)); err != nil {
				return "", err
			}
			return jail.Probe(env)
		}
	}
	return launch.DecideAuthority(sb, s, c, env, now)
}
