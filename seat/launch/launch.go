package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// Environment markers pantty sets for every harness it launches: they tell a
// pantty command run from inside the seat (by the model's shell tool) which seat
// it is in. They are a hint, not the boundary: a child can drop or forge them,
// so Inside decides by process ancestry first (the pane process, see
// paneexec.Run) and uses the markers only when no ancestor is a seat's pane.
const (
	SeatEnv     = "PANTTY_SEAT"
	SeatHomeEnv = "PANTTY_SEAT_HOME"
)

// passEnv is the allow-list of caller variables a harness inherits; everything
// else (tmux's TMUX, nested-session markers, stray secrets) stays out. seat.toml
// adds more with env (values) and pass_env (names).
var passEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}

// HarnessEnv builds the harness's whole environment: the allow-listed caller
// variables, LC_* and the seat's pass_env names (a driver has made its own
// environment the recorded launch-env.toml first: AdoptLaunchEnv), then
// env_file's (read at every launch, so a rotated credential file takes effect
// at the next launch; ReadEnvFile says what it may hold), then the adapter's
// variables, then seat.toml's env, then pantty's in-seat markers. Nested-session markers never pass.
func HarnessEnv(caller []string, s state.Seat, c config.Config, adapterEnv map[string]string) (map[string]string, error) {
	env := callerVars(envMap(caller), c)
	if c.EnvFile != "" {
		fileEnv, err := ReadEnvFile(c.EnvFile, c.Workdir)
		if err != nil {
			return nil, err
		}
		for k, v := range fileEnv {
			env[k] = v
		}
	}
	for k, v := range adapterEnv { // env_file never moves CODEX_HOME or turns the updater on
		env[k] = v
	}
	for k, v := range c.Env {
		env[k] = v
	}
	env[SeatEnv] = s.Name
	env[SeatHomeEnv] = s.Home
	return env, nil
}

// HookCommand is the shell command a harness hook runs to reach `pantty hook`.
func HookCommand(pantty string, s state.Seat, extra ...string) string {
	parts := []string{tmux.ShellQuote(pantty), "--home", tmux.ShellQuote(s.Home), "hook", "--seat", tmux.ShellQuote(s.Name)}
	return strings.Join(append(parts, extra...), " ")
}

// PlannedEnv is the environment the seat's next launch would give its
// harness, computed without writing anything: the recorded launch-env.toml
// with the pass_env names it lacks taken from caller (as `seat start` fills
// them in), or caller's variables alone when there is no record or refresh
// asks to replace it (`--refresh-env`); then env_file, adapterEnv and
// seat.toml's env as HarnessEnv applies them. missing lists the pass_env names
// the harness would not get from any of them. Start and recover check it before
// they change anything; `seat prepare-home` prepares the home this names.
func PlannedEnv(s state.Seat, c config.Config, caller []string, refresh bool, adapterEnv map[string]string) (env map[string]string, missing []string, err error) {
	from := envMap(caller)
	vars := callerVars(from, c)
	old, rerr := s.LaunchEnvFile().Read()
	switch {
	case rerr == nil && !refresh:
		vars = map[string]string{}
		for k, v := range old.Vars {
			vars[k] = v
		}
		for _, k := range c.PassEnv {
			if _, ok := vars[k]; !ok {
				if v, ok := from[k]; ok {
					vars[k] = v
				}
			}
		}
	case rerr != nil && !errors.Is(rerr, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("seat %q: %w", s.Name, rerr)
	}
	env, err = HarnessEnv(state.EnvList(vars), s, c, adapterEnv)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range c.PassEnv {
		if _, ok := env[k]; !ok {
			missing = append(missing, k)
		}
	}
	return env, missing, nil
}

// MissingPassEnvError is the refusal of a launch whose harness would miss
// pass_env variables: it names them and the command to run once they are
// exported (again is the command the person ran, or would run).
func MissingPassEnvError(s state.Seat, missing []string, again string) error {
	exports := make([]string, len(missing))
	for i, k := range missing {
		exports[i] = k + "=<value>"
	}
	return fmt.Errorf("%w: seat %s: pass_env %s is set nowhere the harness would get it from (the shell that starts it, launch-env.toml, env_file, env): export %s, then run '%s'",
		state.ErrBadInput, s.Name, strings.Join(missing, ", "), strings.Join(exports, " "), again)
}
