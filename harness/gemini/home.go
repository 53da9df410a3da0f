package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// Home is the seat's GEMINI_CLI_HOME: seat.toml's env GEMINI_CLI_HOME when it
// sets one, else harness/gemini-home inside the seat's directory. Gemini CLI
// 0.61.0 reads and writes HOME/.gemini there instead of ~/.gemini (settings,
// chat files, its own state; measured 2026-12-04), so the person's own
// ~/.gemini is never read or written by a seat.
func Home(s state.Seat, c config.Config) string {
	if v := c.Env["GEMINI_CLI_HOME"]; v != "" {
		return v
	}
	return filepath.Join(s.HarnessDir(), "gemini-home")
}

// SettingsPath is the seat's settings.json under Home.
func SettingsPath(home string) string { return filepath.Join(home, ".gemini", "settings.json") }

// HookEvents are the Gemini CLI hooks pantty installs, each running `pantty
// hook --gemini-hook` (RunHook):
//   - SessionStart (source startup, resume, clear): the harness started;
//   - BeforeAgent (prompt): submission evidence as the turn starts, and the
//     door through which the handoff is re-injected after a compression
//     (Gemini fires no SessionStart after /compress; measured);
//   - AfterAgent (prompt, prompt_response): the turn end — also after an
//     Escape and after an API error (measured);
//   - PreCompress (trigger manual or auto): the compression's start;
//   - BeforeModel (once per model request, retries included) and AfterTool
//     (between two model steps): the count of a step's attempts, whose second
//     is a retry the CLI shows nowhere else (attempts.go);
//   - SessionEnd, Notification: recorded.
//
// Not AfterModel: it carries the whole conversation, once per streamed chunk
// (measured). BeforeModel carries it once per request; the hook reads only the
// payload's leading fields (readHead). The context reading comes from the
// chat file at the turn's end.
var HookEvents = []string{"SessionStart", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterTool", "PreCompress", "SessionEnd", "Notification"}

// CompressionOutOfReach is model.compressionThreshold for a seat: the
// fraction of the model's window at which the CLI compresses by itself
// (0.5 by default in 0.61.0). At 1 only the window's edge does; pantty
// compacts at its own boundary well before (seat.toml compaction).
const CompressionOutOfReach = 1.0

// PrepareHome makes the seat's GEMINI_CLI_HOME ready for an unattended
// launch: settings.json keeps everything already in it and sets what a seat
// needs — pantty's hooks, API-key authentication unless another method is
// chosen (no sign-in dialog), folder trust off (no trust dialog), no update
// check or usage statistics, the CLI's own compression out of reach, pasted
// @ mentions escaped, and a refused connection not retried inside the turn.
func PrepareHome(s state.Seat, c config.Config, pantty string) error {
	home := Home(s, c)
	dir := filepath.Dir(SettingsPath(home))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("gemini-cli: GEMINI_CLI_HOME: %w", err)
	}
	cfg := map[string]any{}
	data, err := os.ReadFile(SettingsPath(home))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("gemini-cli: %s: %v (not overwritten; fix it by hand)", SettingsPath(home), err)
		}
	}
	setSettings(cfg, launch.HookCommand(pantty, s, "--gemini-hook"))
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	// The temp file goes beside the target: GEMINI_CLI_HOME may be on
	// another file system than the seat's own tmp directory.
	return fsatomic.WriteFile(dir, SettingsPath(home), append(out, '\n'))
}

// setSettings sets the keys a seat needs (see PrepareHome).
func setSettings(cfg map[string]any, hookCommand string) {
	auth := hookwire.JSONObject(hookwire.JSONObject(cfg, "security"), "auth")
	if _, ok := auth["selectedType"]; !ok {
		auth["selectedType"] = "gemini-api-key"
	}
	hookwire.JSONObject(hookwire.JSONObject(cfg, "security"), "folderTrust")["enabled"] = false
	general := hookwire.JSONObject(cfg, "general")
	general["enableAutoUpdate"] = false
	general["enableAutoUpdateNotification"] = false
	// A refused connection ends the turn with its error in the chat file
	// (AfterAgent's StopFailure: pantty's means outage, re-probed) instead of
	// being retried inside the turn for minutes with no hook (measured
	// 2026-12-04). A 429 or a 5xx is still retried by the CLI: neither
	// general.maxAttempts = 1 nor a pinned model stopped that (measured).
	general["retryFetchErrors"] = false
	hookwire.JSONObject(cfg, "privacy")["usageStatisticsEnabled"] = false
	// Board text arrives by paste: Gemini's own switch escapes the @ of a
	// pasted mention, so "@path" in board text is text, not a file read (nor,
	// outside the workspace, a modal that holds the turn; measured).
	ui := hookwire.JSONObject(cfg, "ui")
	ui["escapePastedAtSymbols"] = true
	// The terminal is pantty's tmux pane, which sets no COLORTERM: 0.61.0
	// opened every seat with "⚠ Warning: True color (24-bit) support not
	// detected" (2026-12-06). Saying COLORTERM=truecolor instead changed how
	// it draws its input box (half-block borders, "▀▀▀" under the box), which
	// the command door's CommandSettled, measured without, then never saw
	// settled: so the warning is switched off, not the terminal changed.
	ui["showCompatibilityWarnings"] = false
	hookwire.JSONObject(cfg, "model")["compressionThreshold"] = CompressionOutOfReach
	hooks := map[string]any{}
	for _, ev := range HookEvents {
		hooks[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hookCommand}}}}
	}
	cfg["hooks"] = hooks
}
