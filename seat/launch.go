package seat

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/pantty/pantty/tmux"
)

// Environment markers pantty sets for every harness it launches: they tell a
// pantty command run from inside the seat (by the model's shell tool) which seat
// it is in. They are a hint, not the boundary: a child can drop or forge them,
// so Inside decides by process ancestry first (the pane process, see
// ExecHarness) and uses the markers only when no ancestor is a seat's pane.
const (
	SeatEnv     = "PANTTY_SEAT"
	SeatHomeEnv = "PANTTY_SEAT_HOME"
)

// passEnv is the allow-list of caller variables a harness inherits; everything
// else (tmux's TMUX, nested-session markers, stray secrets) stays out. seat.toml
// adds more with env (values) and pass_env (names).
var passEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"}

// HarnessEnv builds the harness's whole environment: the allow-list taken from the
// caller, LC_* locale variables, the seat's pass_env names, the adapter's and the
// seat's own variables, and pantty's in-seat markers. Nested markers never pass.
func HarnessEnv(caller []string, s Seat, c Config, adapterEnv map[string]string) map[string]string {
	from := map[string]string{}
	for _, kv := range caller {
		if k, v, ok := strings.Cut(kv, "="); ok {
			from[k] = v
		}
	}
	env := map[string]string{}
	for _, k := range passEnv {
		if v, ok := from[k]; ok {
			env[k] = v
		}
	}
	for k, v := range from {
		if strings.HasPrefix(k, "LC_") {
			env[k] = v
		}
	}
	for _, k := range c.PassEnv {
		if v, ok := from[k]; ok && !isNestedMarker(k) {
			env[k] = v
		}
	}
	for k, v := range adapterEnv {
		env[k] = v
	}
	for k, v := range c.Env {
		env[k] = v
	}
	env[SeatEnv] = s.Name
	env[SeatHomeEnv] = s.Home
	return env
}

// LaunchFile is launch.toml: exactly what the pane was last launched with, so a
// person can see it and `pantty __exec` can start it without the environment
// passing through tmux's argv or its global environment.
type LaunchFile struct {
	Argv []string          `toml:"argv"`
	Dir  string            `toml:"dir"`
	Env  map[string]string `toml:"env"`
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// HookCommand is the shell command a harness hook runs to reach `pantty hook`.
func HookCommand(pantty string, s Seat, extra ...string) string {
	parts := []string{tmux.ShellQuote(pantty), "--home", tmux.ShellQuote(s.Home), "hook", "--seat", tmux.ShellQuote(s.Name)}
	return strings.Join(append(parts, extra...), " ")
}

// ClaudeSettings builds the Claude Code-shaped settings file (hooks and status
// line) that both the claude-code adapter and the simulator read via --settings.
// It is per seat and per launch; the user's own settings are never touched.
// With activity on, PreToolUse/PostToolUse hooks are added (bounded by a short
// timeout); off, they are absent, so no process is spawned per tool call.
func ClaudeSettings(pantty string, s Seat, activity bool) ([]byte, error) {
	hook := func(timeout int) []map[string]any {
		h := map[string]any{"type": "command", "command": HookCommand(pantty, s)}
		if timeout > 0 {
			h["timeout"] = timeout
		}
		return []map[string]any{{"matcher": "", "hooks": []map[string]any{h}}}
	}
	hooks := map[string]any{}
	for _, ev := range []string{EvSessionStart, EvUserPromptSubmit, EvStop, EvStopFailure, EvPreCompact, EvPostCompact, EvSessionEnd, EvNotification} {
		hooks[ev] = hook(0)
	}
	if activity {
		hooks["PreToolUse"] = hook(5)
		hooks["PostToolUse"] = hook(5)
	}
	return json.MarshalIndent(map[string]any{
		"hooks":      hooks,
		"statusLine": map[string]any{"type": "command", "command": HookCommand(pantty, s, "--status-line")},
	}, "", "  ")
}
