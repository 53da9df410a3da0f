package config

import (
	"fmt"
	"time"
)

// Rung is one [[ladder]] entry of seat.toml: one way of reaching a model. Rungs
// are ordered by the assumption each drops (pinned engine and model → same
// engine, pins removed → …), and only means failures (tmux, process, binary,
// resume path) move a seat down them. Each rung states its own pins: with a
// ladder, command, args and model belong in the rungs, not at the top level;
// provider and env default to the top level's.
type Rung struct {
	Name     string            `toml:"name"`
	Harness  string            `toml:"harness"` // empty or the seat's harness (another engine needs its own session: not yet)
	Command  string            `toml:"command"`
	Args     []string          `toml:"args"`
	Model    string            `toml:"model"`
	Provider string            `toml:"provider"` // empty: the top-level provider
	Env      map[string]string `toml:"env"`      // added to the top-level env
}

// RecoveryConfig is seat.toml's [recovery] table: how `pantty recover` treats
// this seat. Zero values take the defaults below (docs/recover.md).
type RecoveryConfig struct {
	DemoteAfter     int      `toml:"demote_after"`      // unverified means recoveries on one floor before it descends a rung
	ClimbAfter      int      `toml:"climb_after"`       // good turns below the top before the floor climbs back one rung
	Backoff         Duration `toml:"backoff"`           // wait after the first unverified recovery, and before the driver's first re-probe in a means or transient outage; doubles each time
	BackoffMax      Duration `toml:"backoff_max"`       // cap on those waits (the driver's re-probe is also capped at 10m)
	ProviderReprobe Duration `toml:"provider_reprobe"`  // provider wait when a refusal's reset cannot be read
	ProviderMaxWait Duration `toml:"provider_max_wait"` // cap on a parsed reset
	// TransientAttempts bounds how often one message goes back to the queue
	// after a provider error (5xx, overloaded): a request the provider fails
	// every time must not hold the queue for ever.
	TransientAttempts int `toml:"transient_attempts"`
}

// Recovery defaults.
const (
	DefaultDemoteAfter = 2
	DefaultClimbAfter  = 20
	DefaultBackoff     = time.Minute
	DefaultBackoffMax  = time.Hour
	// DefaultTransientAttempts: with the default backoff the fifth provider
	// error of one message comes about 15 minutes after the first.
	DefaultTransientAttempts = 5
)

// DoneConfig is seat.toml's [done] table: what the finalizer verifies before it
// tears a finished seat down.
type DoneConfig struct {
	Checks []string `toml:"checks"` // git-clean, git-pushed; default both; [] for none
}

// Finalizer checks.
const (
	CheckGitClean  = "git-clean"  // `git status --porcelain` is empty in the workdir
	CheckGitPushed = "git-pushed" // no commit on HEAD that its upstream lacks
)

// RungEnv is the variable through which a launch records its rung: the driver
// puts it in the harness environment, so launch.toml (what the pane was really
// launched with) names the rung, and a new driver that adopts the pane knows it.
const RungEnv = "PANTTY_RUNG"

// validateLadder checks the ladder, [recovery] and [done] and resolves the rungs
// against the top-level fields. Called by validate.
func (c *Config) validateLadder() error {
	if c.Provider == "" {
		c.Provider = c.Harness
	}
	if !ValidProvider(c.Provider) {
		return fmt.Errorf("provider = %q: want [a-z0-9][a-z0-9._-]*", c.Provider)
	}
	if _, ok := c.Env[RungEnv]; ok {
		return fmt.Errorf("env key %q is reserved (pantty sets it to the running rung)", RungEnv)
	}
	for _, k := range c.PassEnv {
		if k == RungEnv {
			return fmt.Errorf("pass_env name %q is reserved", RungEnv)
		}
	}
	c.rungs = nil
	if len(c.Ladder) > 0 && (c.Command != "" || len(c.Args) > 0 || c.Model != "") {
		return fmt.Errorf("with a [[ladder]], command, args and model belong in each rung (the top level must not pin them)")
	}
	seen := map[string]bool{}
	for i, r := range c.Ladder {
		where := fmt.Sprintf("[[ladder]] #%d", i+1)
		if !ValidProvider(r.Name) {
			return fmt.Errorf("%s: name = %q: want [a-z0-9][a-z0-9._-]*", where, r.Name)
		}
		if seen[r.Name] {
			return fmt.Errorf("%s: name %q is used twice", where, r.Name)
		}
		seen[r.Name] = true
		if r.Harness != "" && r.Harness != c.Harness {
			return fmt.Errorf("%s (%s): harness = %q: a rung on another harness than the seat's (%s) is not supported yet", where, r.Name, r.Harness, c.Harness)
		}
		r.Harness = c.Harness
		if r.Provider == "" {
			r.Provider = c.Provider
		}
		if !ValidProvider(r.Provider) {
			return fmt.Errorf("%s (%s): provider = %q: want [a-z0-9][a-z0-9._-]*", where, r.Name, r.Provider)
		}
		env := map[string]string{}
		for k, v := range c.Env {
			env[k] = v
		}
		for k, v := range r.Env {
			if !ValidEnvName(k) || IsNestedMarker(k) || k == RungEnv {
				return fmt.Errorf("%s (%s): env key %q is not a variable pantty may set", where, r.Name, k)
			}
			env[k] = v
		}
		env[RungEnv] = r.Name
		r.Env = env
		c.rungs = append(c.rungs, r)
	}
	rc := &c.Recovery
	if rc.DemoteAfter < 0 || rc.ClimbAfter < 0 || rc.TransientAttempts < 0 {
		return fmt.Errorf("[recovery] demote_after, climb_after and transient_attempts must not be negative")
	}
	if rc.TransientAttempts == 0 {
		rc.TransientAttempts = DefaultTransientAttempts
	}
	if rc.DemoteAfter == 0 {
		rc.DemoteAfter = DefaultDemoteAfter
	}
	if rc.ClimbAfter == 0 {
		rc.ClimbAfter = DefaultClimbAfter
	}
	for _, d := range []struct {
		v   *Duration
		def time.Duration
	}{{&rc.Backoff, DefaultBackoff}, {&rc.BackoffMax, DefaultBackoffMax},
		{&rc.ProviderReprobe, DefaultProviderWait}, {&rc.ProviderMaxWait, MaxProviderWait}} {
		if d.v.Duration == 0 {
			d.v.Duration = d.def
		}
	}
	if rc.BackoffMax.Duration < rc.Backoff.Duration {
		return fmt.Errorf("[recovery] backoff_max (%s) is shorter than backoff (%s)", rc.BackoffMax.Duration, rc.Backoff.Duration)
	}
	if c.Done.Checks == nil {
		c.Done.Checks = []string{CheckGitClean, CheckGitPushed}
	}
	for _, ch := range c.Done.Checks {
		if ch != CheckGitClean && ch != CheckGitPushed {
			return fmt.Errorf("[done] checks: %q: want %s or %s", ch, CheckGitClean, CheckGitPushed)
		}
	}
	return nil
}

// Rungs returns the seat's ladder resolved against the top level (provider and
// WithDrop filled in). A seat without [[ladder]] has one unnamed rung: its top level.
func (c Config) Rungs() []Rung {
	if len(c.rungs) > 0 {
		return c.rungs
	}
	return []Rung{{Harness: c.Harness, Command: c.Command, Args: c.Args, Model: c.Model, Provider: c.Provider, Env: c.Env}}
}

// HasLadder reports whether seat.toml declares a [[ladder]] (a seat without
// one has the one unnamed rung of its top level, and no floor to read).
func (c Config) HasLadder() bool { return len(c.rungs) > 0 }

// RungIndex returns the index of the rung called name; "" and unknown names are
// the top (0), with ok false for an unknown name.
func (c Config) RungIndex(name string) (int, bool) {
	if name == "" {
		return 0, true
	}
	for i, r := range c.Rungs() {
		if r.Name == name {
			return i, true
		}
	}
	return 0, false
}

// OnRung returns the config as it runs on rung i: the rung's command, args,
// model, provider and env in place of the top level's.
func (c Config) OnRung(i int) Config {
	rs := c.Rungs()
	if i < 0 || i >= len(rs) || len(c.rungs) == 0 {
		return c
	}
	r := rs[i]
	c.Command, c.Args, c.Model, c.Provider, c.Env = r.Command, r.Args, r.Model, r.Provider, r.Env
	return c
}
