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

// SystemSettingsPath is the settings file pantty writes for the seat at the
// CLI's system scope (GEMINI_CLI_SYSTEM_SETTINGS_PATH, Env). Gemini CLI
// 0.61.0 merges it over the user's and the workspace's settings, so a
// repository's own .gemini/settings.json cannot undo what a seat needs:
// with pantty's keys only in the user's settings.json, a workdir whose
// .gemini/settings.json said ui.escapePastedAtSymbols false made board
// text's @ mentions live again (the dispatch case of TestE2E held its turns
// for good, 2026-12-06). Hook lists concatenate across scopes (the
// settings schema merges each hook event with "concat"). It lives in the
// seat's own harness directory, not in GEMINI_CLI_HOME: in pantty's jail
// that home is writable by the model, and this file is bound read-only
// (Capabilities.JailReadable).
func SystemSettingsPath(s state.Seat) string {
	return filepath.Join(s.HarnessDir(), "gemini-system-settings.json")
}

// PrepareHome makes the seat's GEMINI_CLI_HOME ready for an unattended
// launch. The system-scope file (SystemSettingsPath), whole and pantty's,
// holds pantty's hooks and every key a seat needs (setSettings): folder
// trust off (no trust dialog), no update check or usage statistics, the
// CLI's own compression out of reach, pasted @ mentions escaped, a refused
// connection not retried inside the turn. settings.json keeps everything
// already in it, gets API-key authentication unless another method is
// chosen (no sign-in dialog) and the same keys (for the CLI run by hand on
// this home), and loses its hooks table, which used to be pantty's: hooks
// in both files would run twice.
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
	auth := hookwire.JSONObject(hookwire.JSONObject(cfg, "security"), "auth")
	if _, ok := auth["selectedType"]; !ok {
		auth["selectedType"] = "gemini-api-key"
	}
	setSettings(cfg)
	delete(cfg, "hooks")
	system := map[string]any{}
	setSettings(system)
	system["hooks"] = hooks(launch.HookCommand(pantty, s, "--gemini-hook"))
	// The temp files go beside their targets: GEMINI_CLI_HOME may be on
	// another file system than the seat's own tmp directory.
	if err := os.MkdirAll(filepath.Dir(SystemSettingsPath(s)), 0o700); err != nil {
		return err
	}
	for path, v := range map[string]map[string]any{SettingsPath(home): cfg, SystemSettingsPath(s): system} {
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := fsatomic.WriteFile(filepath.Dir(path), path, append(out, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// hooks is pantty's hooks table: every HookEvents entry runs command.
func hooks(command string) map[string]any {
	out := map[string]any{}
	for _, ev := range HookEvents {
		out[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}}
	}
	return out
}

// setSettings sets the keys a seat needs but its hooks (see PrepareHome).
func setSettings(cfg map[string]any) {
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
}
