package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/guard"
)

// Shapes a seat can run in (docs/shapes.md). Only resident is driven today.
const (
	ShapeResident = "resident"
	ShapeTurn     = "turn"
	ShapeStep     = "step"
)

// Transports: how a seat's driver reaches its harness (docs/codex.md, "The
// app-server path (experimental, measured on 0.171.0)"). TransportTmux pastes
// into the harness's TUI in a tmux pane; TransportAppServer submits turns to
// Codex's own app server (codex only, resident only). TransportAuto, which
// every harness accepts, is resolved at each driver start to the path
// measured better for the installed version (gates.ChooseTransport): the app
// server only when the harness has one, the seat may run on it
// (AppServerRefusal) and its stored app-server contract has every row met;
// tmux otherwise.
const (
	TransportTmux      = "tmux"
	TransportAppServer = "app-server"
	TransportAuto      = "auto"
)

// Duration is a time.Duration written in seat.toml as a Go duration string ("30s").
type Duration struct{ time.Duration }

// UnmarshalText parses a duration string so a typo is a line-numbered error.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. 30s, 5m, 1h)", string(b))
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back in the same form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// Config is seat.toml: the declared identity and configuration a person writes.
// pantty validates it and never rewrites it. Declared values are never reported as
// telemetry (the model a seat really runs comes from the harness's own records).
type Config struct {
	Name    string `toml:"name"`
	Harness string `toml:"harness"`
	Workdir string `toml:"workdir"`
	Shape   string `toml:"shape"`
	// Transport is TransportTmux (the default), TransportAppServer or
	// TransportAuto (resolved at launch; session.toml records the path run).
	Transport string `toml:"transport"`

	// Command is the harness binary; empty means the adapter's default.
	Command        string   `toml:"command"`
	Args           []string `toml:"args"`
	Model          string   `toml:"model"`
	PermissionMode string   `toml:"permission_mode"`

	// Env is added to the harness's environment on top of the allow-list taken
	// from the caller (docs/state.md lists it).
	Env map[string]string `toml:"env"`
	// PassEnv names further caller variables to pass through (e.g. an API key
	// kept out of this file).
	PassEnv []string `toml:"pass_env"`
	// EnvFile is a file of KEY=VALUE lines (systemd EnvironmentFile syntax) read
	// at every launch, after the recorded caller variables and before env: a
	// credential that rotates without touching seat.toml or re-running start.
	EnvFile string `toml:"env_file"`

	MaxMessageBytes   int      `toml:"max_message_bytes"`
	TurnCeiling       Duration `toml:"turn_ceiling"`
	HeartbeatInterval Duration `toml:"heartbeat_interval"`
	ReadyTimeout      Duration `toml:"ready_timeout"`
	PasteSettle       Duration `toml:"paste_settle"`
	SubmitTimeout     Duration `toml:"submit_timeout"`
	SubmitRetries     int      `toml:"submit_retries"`

	Tmux TmuxConfig `toml:"tmux"`

	// Relay is "" (observe people attaching: relay mode) or "ignore" (people
	// attach only to watch; the driver keeps submitting).
	Relay string `toml:"relay"`

	// Activity adds PreToolUse/PostToolUse hooks recording "now doing X" (off by
	// default: every configured hook costs a process spawn per tool call).
	// Takes effect at the harness's next launch.
	Activity bool `toml:"activity"`

	Compaction CompactionConfig `toml:"compaction"`
	Refresh    RefreshConfig    `toml:"refresh"`
	// Authority is what the seat's model may reach (seat/authority.go,
	// docs/intake.md): OS isolation of its shell.
	Authority AuthorityConfig `toml:"authority"`

	// Provider names the quota pool the harness draws on: a provider refusal
	// blocks every seat on it ($PANTTY_HOME/providers.toml). Default: the harness.
	Provider string `toml:"provider"`
	// Ladder, Recovery and Done: the means-failure ladder, how recover treats
	// the seat, and the finalizer's checks (ladder.go, docs/recover.md).
	Ladder   []Rung         `toml:"ladder"`
	Recovery RecoveryConfig `toml:"recovery"`
	Done     DoneConfig     `toml:"done"`
	// Gates: what a start or revival does with a harness version nobody
	// measured (docs/gates.md).
	Gates GatesConfig `toml:"gates"`

	rungs []Rung // the ladder resolved against the top level (validateLadder)
}

// What a resident start or a revival does when the installed harness version
// has no measurement at all (no registry range covers it, no local contract).
const (
	UnmeasuredRefuse = "refuse" // the default: refused, naming the version and the measuring command
	UnmeasuredWarn   = "warn"   // started anyway, with a warning naming both
)

// GatesConfig is the seat's side of the adoption gates.
type GatesConfig struct {
	Unmeasured string `toml:"unmeasured"`
}

// TmuxConfig names the private tmux server the seat's pane lives on.
type TmuxConfig struct {
	// Socket is a socket name (resolved like tmux -L) or an absolute path;
	// empty means $PANTTY_TMUX_SOCKET, else "pantty".
	Socket string `toml:"socket"`
}

// CompactionConfig shapes the compaction cycle itself.
type CompactionConfig struct {
	Instructions string   `toml:"instructions"` // passed to /compact
	Timeout      Duration `toml:"timeout"`      // a cycle without its evidence by then failed
}

// Refresh policies: when a resident seat refreshes its context (a compaction
// cycle at a boundary pantty chooses).
const (
	RefreshNone    = "none"    // only explicit `seat compact`
	RefreshFixed   = "fixed"   // after every Every processed messages
	RefreshContext = "context" // when pressure plus the next message's estimate would cross Threshold
	RefreshSelf    = "self"    // when the seat asks (`pantty handoff request` from inside)
)

// RefreshConfig is the refresh policy of a resident seat; every decision is
// recorded with the numbers it used (artifacts/refresh-*.toml).
type RefreshConfig struct {
	Policy    string  `toml:"policy"`
	Every     int     `toml:"every"`     // fixed: messages between refreshes
	Threshold float64 `toml:"threshold"` // context: fraction of (window − floor)
}

// DefaultCompactTimeout bounds one compaction cycle.
const DefaultCompactTimeout = 5 * time.Minute

// Defaults applied to zero fields after decoding; docs/state.md lists them.
const (
	DefaultTurnCeiling       = 30 * time.Minute
	DefaultHeartbeatInterval = 30 * time.Second
	DefaultReadyTimeout      = 60 * time.Second
	DefaultSubmitTimeout     = 5 * time.Second
	DefaultSubmitRetries     = 3
)

var envKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// ValidEnvName reports whether k can name an environment variable (letters,
// digits and underscores, not starting with a digit).
func ValidEnvName(k string) bool { return envKeyRE().MatchString(k) }

// AppServerRefusal says why this seat cannot run on an app server (whatever
// the harness): only a resident seat does, without args (flags of the TUI,
// which that path does not run; model and permission_mode still apply) and
// without a [[ladder]] (a rung change relaunches through the TUI: not built
// for that path yet). nil when it can. transport = "app-server" is refused at
// load for these reasons; transport = "auto" falls back to tmux for them.
func (c Config) AppServerRefusal() error {
	switch {
	case c.Shape != "" && c.Shape != ShapeResident:
		return fmt.Errorf("only a resident seat runs on it (shape = %q)", c.Shape)
	case len(c.Args) > 0:
		return errors.New("args are flags of the TUI, which this transport does not run (model and permission_mode still apply)")
	case len(c.Ladder) > 0:
		return errors.New("a [[ladder]] is not supported on this transport yet (remove the ladder or use transport = \"tmux\")")
	}
	return nil
}

// validate checks the file's own rules and fills the documented defaults;
// harnesses are the registered harness names.
func (c *Config) Validate(name string, harnesses []string) error {
	if c.Name != name {
		return fmt.Errorf("name = %q does not match the seat's directory %q", c.Name, name)
	}
	if !slices.Contains(harnesses, c.Harness) {
		return fmt.Errorf("harness = %q: want one of %s", c.Harness, strings.Join(harnesses, ", "))
	}
	if c.Workdir == "" {
		return fmt.Errorf("workdir is missing")
	}
	if !filepath.IsAbs(c.Workdir) {
		return fmt.Errorf("workdir = %q must be an absolute path", c.Workdir)
	}
	fi, err := os.Stat(c.Workdir)
	if err != nil {
		return fmt.Errorf("workdir %s: %v", c.Workdir, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("workdir %s is not a directory", c.Workdir)
	}
	switch c.Shape {
	case "":
		c.Shape = ShapeResident
	case ShapeResident:
	case ShapeTurn, ShapeStep:
	default:
		return fmt.Errorf("shape = %q: want resident, turn or step", c.Shape)
	}
	switch c.Transport {
	case "":
		c.Transport = TransportTmux
	case TransportTmux:
	case TransportAuto:
	case TransportAppServer:
		if c.Harness != "codex" {
			return fmt.Errorf("transport = %q: only the codex harness has an app server (harness = %q)", c.Transport, c.Harness)
		}
		if err := c.AppServerRefusal(); err != nil {
			return fmt.Errorf("transport = %q: %w", c.Transport, err)
		}
	default:
		return fmt.Errorf("transport = %q: want tmux, app-server or auto", c.Transport)
	}
	for k := range c.Env {
		if !ValidEnvName(k) {
			return fmt.Errorf("env key %q is not a valid variable name", k)
		}
		if IsNestedMarker(k) {
			return fmt.Errorf("env key %q is reserved (pantty sets or strips it)", k)
		}
	}
	for _, k := range c.PassEnv {
		if !ValidEnvName(k) || IsNestedMarker(k) {
			return fmt.Errorf("pass_env name %q is not a variable pantty may pass", k)
		}
	}
	if c.EnvFile != "" && !filepath.IsAbs(c.EnvFile) {
		return fmt.Errorf("env_file %q: want an absolute path (a scheduler's working directory is not yours)", c.EnvFile)
	}
	if c.MaxMessageBytes < 0 || c.MaxMessageBytes > guard.DefaultMaxMessageBytes {
		return fmt.Errorf("max_message_bytes = %d: want 1..%d (the guard's own limit)", c.MaxMessageBytes, guard.DefaultMaxMessageBytes)
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = guard.DefaultMaxMessageBytes
	}
	if c.SubmitRetries < 0 || c.SubmitRetries > 20 {
		return fmt.Errorf("submit_retries = %d: want 0..20", c.SubmitRetries)
	}
	def := func(d *Duration, v time.Duration) {
		if d.Duration == 0 {
			d.Duration = v
		}
	}
	def(&c.TurnCeiling, DefaultTurnCeiling)
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&c.ReadyTimeout, DefaultReadyTimeout)
	def(&c.SubmitTimeout, DefaultSubmitTimeout)
	def(&c.Compaction.Timeout, DefaultCompactTimeout)
	if c.Relay != "" && c.Relay != RelayIgnore {
		return fmt.Errorf("relay = %q: want \"ignore\" or nothing", c.Relay)
	}
	if err := c.Authority.validate(); err != nil {
		return err
	}
	switch c.Gates.Unmeasured {
	case "":
		c.Gates.Unmeasured = UnmeasuredRefuse
	case UnmeasuredRefuse, UnmeasuredWarn:
	default:
		return fmt.Errorf("gates unmeasured = %q: want refuse or warn", c.Gates.Unmeasured)
	}
	switch c.Refresh.Policy {
	case "":
		c.Refresh.Policy = RefreshNone
	case RefreshNone, RefreshSelf:
	case RefreshFixed:
		if c.Refresh.Every < 1 {
			return fmt.Errorf("refresh policy \"fixed\" needs every = N (messages between refreshes, at least 1)")
		}
	case RefreshContext:
		if c.Refresh.Threshold <= 0 || c.Refresh.Threshold >= 1 {
			return fmt.Errorf("refresh policy \"context\" needs threshold between 0 and 1 (got %v)", c.Refresh.Threshold)
		}
	default:
		return fmt.Errorf("refresh policy = %q: want none, fixed, context or self", c.Refresh.Policy)
	}
	if c.SubmitRetries == 0 {
		c.SubmitRetries = DefaultSubmitRetries
	}
	return c.validateLadder()
}

// isNestedMarker reports variables that must never pass from a caller into a
// harness: tmux's own (a nested client would talk to the wrong server), Claude
// Code's nested-session markers, and pantty's in-seat markers.
func IsNestedMarker(k string) bool {
	switch k {
	case "TMUX", "TMUX_PANE", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT":
		return true
	}
	return strings.HasPrefix(k, "PANTTY_SEAT") || k == HomeEnv
}

// HomeEnv names the environment variable that points pantty at its state root.
const HomeEnv = "PANTTY_HOME"

// RelayIgnore in seat.toml opts a seat out of relay (people attach only to watch).
const RelayIgnore = "ignore"
