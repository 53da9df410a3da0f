package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
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

var rungNameRE = providerNameRE

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
		if !rungNameRE.MatchString(r.Name) {
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
			if !envKeyRE.MatchString(k) || isNestedMarker(k) || k == RungEnv {
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

// Recovery is recovery.toml, written by `pantty recover` only: the demotion
// floor and the failure bookkeeping. The driver reads the floor; the running
// rung is never stored: it is derived from the floor and the provider blocks
// each time (Plan), so a seat that moved to another engine during a provider
// wait comes back by itself when the wait ends.
type Recovery struct {
	Floor         string    `toml:"floor"`                 // the best rung the seat may run ("" = the top)
	FloorSince    time.Time `toml:"floor_since,omitempty"` // good turns are counted from here
	FloorWhy      string    `toml:"floor_why,omitempty"`
	MeansFailures int       `toml:"means_failures"` // unverified means recoveries on this floor
	Failures      int       `toml:"failures"`       // consecutive unverified recoveries (drives the backoff)
	NextAttempt   time.Time `toml:"next_attempt,omitempty"`
	LastCause     string    `toml:"last_cause,omitempty"`
	LastAction    string    `toml:"last_action,omitempty"`
	LastResult    string    `toml:"last_result,omitempty"`
	LastAt        time.Time `toml:"last_at,omitempty"`
	Revived       int       `toml:"revived"` // verified recoveries, ever
}

// RecoveryPath is recovery.toml.
func (s Seat) RecoveryPath() string { return s.path("recovery.toml") }

// ReadRecovery reads recovery.toml; a missing file wraps fs.ErrNotExist (a seat
// recover never had to act on).
func (s Seat) ReadRecovery() (Recovery, error) {
	var r Recovery
	return r, ReadState(s.RecoveryPath(), &r)
}

// Plan is which rung a seat runs now and whether it must wait for a provider.
type Plan struct {
	Config   Config    // the seat's config on the running rung
	Rung     string    // the running rung's name ("" without a ladder)
	Index    int       // its index on the ladder
	Floor    int       // the demotion floor's index
	Provider string    // the running rung's provider
	Wait     time.Time // non-zero: every rung at or below the floor is blocked until then
	Waiting  string    // the wait, in words (heartbeat and recover output)
	Why      string    // why this rung, in words
}

// PlanFor derives the running rung: the first rung at or below the floor whose
// provider is not blocked at now. When every one is blocked the seat waits for
// the earliest unblock (never the latest) on the rung it belongs to.
func PlanFor(c Config, floor string, blocks Blocks, now time.Time) Plan {
	rs := c.Rungs()
	fi, _ := c.RungIndex(floor)
	best, bestUntil := -1, time.Time{}
	var skipped []string
	for i := fi; i < len(rs); i++ {
		b, blocked := blocks.Active(rs[i].Provider, now)
		if !blocked {
			p := Plan{Config: c.OnRung(i), Rung: rs[i].Name, Index: i, Floor: fi, Provider: rs[i].Provider}
			switch {
			case len(skipped) > 0:
				p.Why = "provider blocked on " + strings.Join(skipped, ", ")
			case fi > 0:
				p.Why = "demotion floor " + rs[fi].Name
			default:
				p.Why = "top rung"
			}
			return p
		}
		skipped = append(skipped, fmt.Sprintf("rung %s (%s until %s)", rs[i].Name, rs[i].Provider, b.Until.Format(time.RFC3339)))
		if best < 0 || b.Until.Before(bestUntil) {
			best, bestUntil = i, b.Until
		}
	}
	b := blocks[rs[best].Provider]
	p := Plan{Config: c.OnRung(best), Rung: rs[best].Name, Index: best, Floor: fi, Provider: rs[best].Provider, Wait: bestUntil}
	by := ""
	if b.Seat != "" {
		by = " (refused on seat " + b.Seat + ")"
	}
	p.Waiting = fmt.Sprintf("provider %s: %s until %s%s", rs[best].Provider, b.Error, bestUntil.UTC().Format(time.RFC3339), by)
	if b.Text != "" {
		p.Waiting += ": " + b.Text // the provider's own words
	}
	p.Why = "every rung at or below the floor is blocked; waiting for the earliest unblock"
	return p
}

// Plan reads the floor (recovery.toml) and the provider blocks and derives the
// running rung for config c (seat.toml as loaded).
func (s Seat) Plan(c Config, now time.Time) (Plan, error) {
	floor := ""
	if len(c.rungs) > 0 {
		r, err := s.ReadRecovery()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Plan{}, err
		}
		floor = r.Floor
	}
	blocks, err := ReadBlocks(s.Home)
	if err != nil {
		return Plan{}, err
	}
	return PlanFor(c, floor, blocks, now), nil
}

// RunningConfig is c on the rung the seat should run now; a new driver starts
// there. When the records cannot be read it stays on c (and says why).
func (s Seat) RunningConfig(c Config, now time.Time) (Config, error) {
	p, err := s.Plan(c, now)
	if err != nil {
		return c, err
	}
	return p.Config, nil
}

// LaunchedRung is the rung the pane was last launched on, from launch.toml.
func (s Seat) LaunchedRung() (string, error) {
	var lf LaunchFile
	if err := ReadState(s.LaunchPath(), &lf); err != nil {
		return "", err
	}
	return lf.Env[RungEnv], nil
}
