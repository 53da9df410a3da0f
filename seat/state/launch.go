package state

import (
	"path/filepath"
	"sort"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/statedir"
)

// LaunchFile is launch.toml: exactly what the pane was last launched with, so a
// person can see it and `pantty __exec` can start it without the environment
// passing through tmux's argv or its global environment.
type LaunchFile struct {
	Argv []string          `toml:"argv"`
	Dir  string            `toml:"dir"`
	Env  map[string]string `toml:"env"`
	// Door is the hook door's socket when the harness runs in pantty's jail
	// (seat/jail): the pane process serves it outside the jail, running
	// `pantty hook` for this seat with one of DoorFlags (the harness's hook
	// forms) or none.
	Door      string   `toml:"door,omitempty"`
	DoorFlags []string `toml:"door_flags,omitempty"`
}

// HarnessArgv is the harness's own argv: Argv itself, or for a jailed launch
// (Door set) what follows bubblewrap's "--".
func (l LaunchFile) HarnessArgv() []string {
	if l.Door != "" {
		for i, a := range l.Argv {
			if a == "--" {
				return l.Argv[i+1:]
			}
		}
	}
	return l.Argv
}

func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// LaunchEnv is launch-env.toml: the environment the harness needs, taken once
// from the shell of the person who ran `seat start` (the allow-listed variables,
// LC_*, and the seat's pass_env names) and used for every later launch — a
// driver's relaunch, a revival by `pantty recover` under cron's bare
// environment, a ladder rung, a step — so a seat launches the same way whoever
// launches it. It holds secrets (pass_env values such as an API key): it is
// private (0600 in a 0700 directory) and lives under $PANTTY_HOME, which the
// settings pantty gives the harness deny to its read tools.
type LaunchEnv struct {
	RecordedAt time.Time         `toml:"recorded_at"`
	By         string            `toml:"by"`                // which command recorded it
	Vars       map[string]string `toml:"vars"`              // the caller variables the harness gets
	Command    string            `toml:"command"`           // the harness command as the adapter names it
	Binary     string            `toml:"binary"`            // Command resolved on the recorded PATH at the last launch
	Missing    []string          `toml:"missing,omitempty"` // pass_env names the recording shell did not have
}

// LaunchEnvPath is launch-env.toml.
func (s Seat) LaunchEnvPath() string { return s.path("launch-env.toml") }

// Environ is the record's variables as KEY=VALUE, sorted.
func (l LaunchEnv) Environ() []string { return EnvList(l.Vars) }

// DropEnv names the seat's drop directory in the harness's environment when
// isolation is on: the one place the sandboxed shell may write for pantty
// (`pantty handoff note`, `pantty handoff request` from inside), read and
// validated by the seat's driver (seat/drop.go).
const DropEnv = "PANTTY_DROP"

// Authority is authority.toml: what the last launch let the seat's model reach,
// written by the driver at each launch so `status` and `gates` report what holds
// rather than what seat.toml asked for.
type Authority struct {
	// Isolation is on, off or unavailable; Why says what decided it.
	Isolation string `toml:"isolation"`
	Mechanism string `toml:"mechanism,omitempty"`
	Why       string `toml:"why"`
	// Protected are the absolute paths the harness's read tools, @-mentions and
	// (isolated) shell are denied: $PANTTY_HOME and the harness's credentials.
	Protected []string `toml:"protected"`
	// Drop is the seat's drop directory when isolation is on.
	Drop string    `toml:"drop,omitempty"`
	At   time.Time `toml:"at"`
}

// On reports whether the OS sandbox was on at the last launch.
func (a Authority) On() bool { return a.Isolation == config.IsolationOn }

// AuthorityPath is authority.toml in the seat's directory.
func (s Seat) AuthorityPath() string { return s.path("authority.toml") }

// WithDrop adds the drop directory to the harness's environment when isolation is on.
func (a Authority) WithDrop(env map[string]string) map[string]string {
	if a.Drop != "" {
		env[DropEnv] = a.Drop
	} else {
		delete(env, DropEnv)
	}
	return env
}

// AuthorityFile is authority.toml: what the last launch let the seat's model reach.
func (s Seat) AuthorityFile() statedir.File[Authority] { return bind[Authority](s, s.AuthorityPath()) }

// LaunchEnvFile is launch-env.toml: what the harness needs from the starting shell's environment (secrets: private).
func (s Seat) LaunchEnvFile() statedir.File[LaunchEnv] { return bind[LaunchEnv](s, s.LaunchEnvPath()) }

// LaunchFile is launch.toml: exactly what the pane was last launched with; `pantty __exec` starts it.
func (s Seat) LaunchFile() statedir.File[LaunchFile] { return bind[LaunchFile](s, s.LaunchPath()) }

// LaunchFileAt is launch.toml at path, for `pantty __exec`, which is given
// the path (its seat's directory, with tmp/ beside it).
func LaunchFileAt(path string) statedir.File[LaunchFile] {
	return statedir.Bind[LaunchFile](filepath.Join(filepath.Dir(path), "tmp"), path, ReadRegular)
}

func (s Seat) LaunchPath() string { return s.path("launch.toml") }

// ServerLaunchFile is server-launch.toml: what a seat's app server (Codex's,
// transport = "app-server") was last started with. `pantty __exec` reads it
// to start the server as its child, as a pane's reads launch.toml; it is a
// file of its own because launch.toml is the viewer pane's meanwhile.
func (s Seat) ServerLaunchFile() statedir.File[LaunchFile] {
	return bind[LaunchFile](s, s.ServerLaunchPath())
}

// ServerLaunchPath is server-launch.toml's path: the record the server's
// `pantty __exec` is given on its command line.
func (s Seat) ServerLaunchPath() string { return s.path("server-launch.toml") }
