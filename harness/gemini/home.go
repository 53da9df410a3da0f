package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

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
	if _, ok := c.Env[SystemSettingsEnv]; ok {
		return fmt.Errorf("gemini-cli: seat.toml env may not set %s: pantty's hooks and the keys a seat needs are its system settings (%s; docs/gemini.md)", SystemSettingsEnv, SystemSettingsPath(s))
	}
	home := Home(s, c)
	if err := os.MkdirAll(filepath.Dir(SettingsPath(home)), 0o700); err != nil {
		return fmt.Errorf("gemini-cli: GEMINI_CLI_HOME: %w", err)
	}
	cfg, err := readSettings(SettingsPath(home))
	if err != nil {
		return err
	}
	auth := hookwire.JSONObject(hookwire.JSONObject(cfg, "security"), "auth")
	if _, ok := auth["selectedType"]; !ok {
		auth["selectedType"] = "gemini-api-key"
	}
	setSettings(cfg)
	dropOwnHooks(cfg)
	// The machine's own system settings (an administrator's policy) stay
	// under pantty's keys: pointing the CLI at the seat's file replaces them.
	system, err := readAdminSettings(adminSystemSettings(SystemSettingsPath(s)))
	if err != nil {
		return err
	}
	setSettings(system)
	command := launch.HookCommand(pantty, s, "--gemini-hook")
	addHooks(system, command)
	enableHooks(system, command)
	// The system file first: a launch never runs with settings.json's hooks
	// gone and pantty's not yet in place. Each temp file goes beside its
	// target: GEMINI_CLI_HOME may be on another file system.
	if err := os.MkdirAll(filepath.Dir(SystemSettingsPath(s)), 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		path string
		v    map[string]any
	}{{SystemSettingsPath(s), system}, {SettingsPath(home), cfg}} {
		out, err := json.MarshalIndent(f.v, "", "  ")
		if err != nil {
			return err
		}
		if err := fsatomic.WriteFile(filepath.Dir(f.path), f.path, append(out, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// SystemSettingsEnv is the variable that points Gemini CLI at its
// system-scope settings file.
const SystemSettingsEnv = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"

// adminSystemSettings is the system settings file the CLI would read without
// pantty: the caller's SystemSettingsEnv when it names another file than
// ours and not another seat's (a variable carried out of a seat's
// environment would merge that seat's hooks into this one), else the
// platform's default path (Gemini CLI 0.61.0's getSystemSettingsPath).
func adminSystemSettings(ours string) string {
	if p := os.Getenv(SystemSettingsEnv); p != "" && p != ours && !seatsOwn(p) {
		return p
	}
	if runtime.GOOS == "darwin" {
		return "/Library/Application Support/GeminiCli/settings.json"
	}
	return "/etc/gemini-cli/settings.json"
}

// readSettings reads a settings file as JSON; a missing one is empty, an
// unreadable or malformed one an error naming it (never overwritten).
func readSettings(path string) (map[string]any, error) {
	cfg := map[string]any{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gemini-cli: %w", err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("gemini-cli: %s: %v (not overwritten; fix it by hand)", path, err)
	}
	return cfg, nil
}

// seatsOwn reports whether path is a seat's system settings file
// (SystemSettingsPath of any seat): pantty's, never an administrator's.
func seatsOwn(path string) bool {
	return filepath.Base(path) == "gemini-system-settings.json" && filepath.Base(filepath.Dir(path)) == "harness"
}

// readAdminSettings reads the machine's own system settings, which pantty
// only reads: Gemini CLI strips comments from a settings file before
// parsing it, and so does this; one it cannot parse is named as the
// machine's, for whoever keeps it.
func readAdminSettings(path string) (map[string]any, error) {
	cfg := map[string]any{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err == nil {
		err = json.Unmarshal(withoutJSONComments(data), &cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("gemini-cli: cannot read the machine's system settings %s: %v", path, err)
	}
	return cfg, nil
}

// withoutJSONComments blanks // and /* */ comments outside strings, keeping
// every newline (a parse error's position stays true).
func withoutJSONComments(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out) && !(out[i] == '*' && i+1 < len(out) && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i+1 < len(out) {
				out[i], out[i+1] = ' ', ' '
				i++
			}
		}
	}
	return out
}

// ownHook reports whether a hook (one entry of a definition's hooks list)
// runs `pantty hook --gemini-hook` (any pantty binary, any seat): pantty's.
func ownHook(h any) bool {
	hm, _ := h.(map[string]any)
	cmd, _ := hm["command"].(string)
	return ownCommand(cmd)
}

// ownCommand reports whether a hook command is `pantty hook --gemini-hook`.
func ownCommand(cmd string) bool {
	return strings.Contains(cmd, " hook --seat ") && strings.HasSuffix(cmd, "--gemini-hook")
}

// dropOwnHooks removes pantty's hooks from a settings hooks table (they
// moved to the system scope; in both they would run twice), keeping a
// person's own, also those that share a definition (its matcher) with
// pantty's: a definition goes only when no hook is left in it.
func dropOwnHooks(cfg map[string]any) {
	table, ok := cfg["hooks"].(map[string]any)
	if !ok {
		return
	}
	for ev, defs := range table {
		list, ok := defs.([]any)
		if !ok {
			continue
		}
		var keep []any
		for _, d := range list {
			dm, ok := d.(map[string]any)
			inner, isList := dm["hooks"].([]any)
			if !ok || !isList {
				keep = append(keep, d)
				continue
			}
			var left []any
			for _, h := range inner {
				if !ownHook(h) {
					left = append(left, h)
				}
			}
			if len(left) == 0 && len(inner) > 0 {
				continue
			}
			dm["hooks"] = left
			keep = append(keep, dm)
		}
		if len(keep) == 0 {
			delete(table, ev)
		} else {
			table[ev] = keep
		}
	}
	if len(table) == 0 {
		delete(cfg, "hooks")
	}
}

// addHooks puts pantty's hook (command) on every HookEvents entry of cfg's
// hooks table, after the entries already there that are not pantty's.
func addHooks(cfg map[string]any, command string) {
	dropOwnHooks(cfg)
	table := hookwire.JSONObject(cfg, "hooks")
	for ev, defs := range hooks(command) {
		list, _ := table[ev].([]any)
		table[ev] = append(list, defs.([]any)...)
	}
}

// enableHooks makes sure the CLI runs pantty's hooks: the system scope
// overrides the others' hooksConfig.enabled (a workspace's false would turn
// every hook off), and pantty's command leaves this file's
// hooksConfig.disabled. Gemini CLI 0.61.0 joins the disabled lists of every
// scope (merge strategy union) and names a hook without a name by its
// command: a user's or workspace's list naming pantty's command still
// disables it, which this file cannot undo (docs/gemini.md).
func enableHooks(cfg map[string]any, command string) {
	hc := hookwire.JSONObject(cfg, "hooksConfig")
	hc["enabled"] = true
	list, ok := hc["disabled"].([]any)
	if !ok {
		return
	}
	var keep []any
	for _, v := range list {
		if name, _ := v.(string); name != command && !ownCommand(name) {
			keep = append(keep, v)
		}
	}
	hc["disabled"] = keep
	if len(keep) == 0 {
		delete(hc, "disabled")
	}
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
