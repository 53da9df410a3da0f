package hookwire

import (
	"encoding/json"

	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// claudeCredentialEnv are the variables that carry Claude Code's own
// credential; the sandbox unsets them for the model's commands (the harness
// itself keeps them).
var claudeCredentialEnv = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}

// ClaudeSettings builds the Claude Code-shaped settings file (hooks and status
// line) that both the claude-code adapter and the simulator read via --settings.
// It is per seat and per launch; the user's own settings are never touched.
// With activity on, PreToolUse/PostToolUse hooks are added (bounded by a short
// timeout); off, they are absent, so no process is spawned per tool call.
//
// It also carries the seat's authority (a, from harness.ResolveAuthority), because a
// --settings file wins over a repository's settings (measured on 2.1.328,
// docs/claude-code.md "Launch"):
//   - permissions.deny Read, Edit and Write of every protected path
//     ($PANTTY_HOME, the harness's credentials) in the //absolute form: the Read
//     rule is what stops an @-mention in board text from expanding the file,
//     and the read tool from opening it (docs/claude-code.md, measured);
//   - crossSessionInbound "refuse": Claude Code's session socket takes text from
//     any same-user process without its key on Linux (measured on 2.1.328);
//   - with isolation on, the Bash sandbox (bubblewrap): required
//     (failIfUnavailable), no unsandboxed fallback, writes denied under the
//     protected paths and granted in the seat's drop directory only, and
//     Claude Code's own credential variables unset for sandboxed commands.
func ClaudeSettings(pantty string, s state.Seat, activity bool, a state.Authority) ([]byte, error) {
	hook := func(timeout int) []map[string]any {
		h := map[string]any{"type": "command", "command": launch.HookCommand(pantty, s)}
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
	var deny []string
	for _, p := range a.Protected {
		// Read and Edit: Claude Code's Edit rules cover every tool that
		// writes a file. A Write(…) rule matches nothing, and 2.1.328 said so
		// on the seat's first screen, four times ("⚠ Deny rule Write(//…)
		// never matches · use Edit(…)"): noise of pantty's own making.
		for _, tool := range []string{"Read", "Edit"} {
			deny = append(deny, tool+"(/"+p+"/**)", tool+"(/"+p+")")
		}
	}
	settings := map[string]any{
		"hooks":               hooks,
		"statusLine":          map[string]any{"type": "command", "command": launch.HookCommand(pantty, s, "--status-line")},
		"crossSessionInbound": "refuse",
	}
	if len(deny) > 0 {
		settings["permissions"] = map[string]any{"deny": deny}
	}
	if a.On() {
		fs := map[string]any{"denyWrite": a.Protected, "denyRead": a.Protected}
		if a.Drop != "" {
			fs["allowWrite"] = []string{a.Drop}
		}
		var env []map[string]string
		for _, k := range claudeCredentialEnv {
			env = append(env, map[string]string{"name": k, "mode": "deny"})
		}
		settings["sandbox"] = map[string]any{
			"enabled":                  true,
			"failIfUnavailable":        true,
			"allowUnsandboxedCommands": false,
			"filesystem":               fs,
			"credentials":              map[string]any{"envVars": env},
		}
	}
	return json.MarshalIndent(settings, "", "  ")
}

// JSONObject returns m[key] as a JSON object, creating it (or replacing a
// value that is not an object): how an adapter sets one key deep in a
// harness's settings file while keeping everything else.
func JSONObject(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}
