// Package hookwire is pantty's internal wire format for what a harness reports,
// and it IS Claude Code's hook dialect: the event names (SessionStart,
// UserPromptSubmit, Stop, StopFailure, …) and payload fields (HookFields), the
// event file `pantty hook` writes, the settings file that installs the hooks
// (written for every harness by the driver), the StopFailure error table
// (ClassifyFailure) and a local command's answer as Claude Code's transcript
// records it. Claude Code was the first harness, and its dialect carries every
// fact the driver binds evidence on (session, prompt id, the failure's words),
// so the other adapters (Codex, Gemini CLI, the simulator) translate their own
// hooks into it rather than the driver learning one dialect per harness.
// docs/claude-code.md, "Hooks", describes the fields.
package hookwire
