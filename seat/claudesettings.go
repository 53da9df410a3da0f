package seat

import "encoding/json"

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
