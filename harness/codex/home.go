package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// Home is the seat's CODEX_HOME: seat.toml's env CODEX_HOME when it sets one,
// else harness/codex-home inside the seat's directory. It holds Codex's config,
// hooks, rollouts and state for this seat only.
func Home(s state.Seat, c config.Config) string {
	if v := c.Env["CODEX_HOME"]; v != "" {
		return v
	}
	return filepath.Join(s.HarnessDir(), "codex-home")
}

// HookEvents are the Codex hooks pantty installs, each running `pantty hook
// --codex-hook` (RunHook):
//   - SessionStart: the compaction's re-injection (its output goes into the
//     next request, measured);
//   - UserPromptSubmit (turn_id, prompt): submission evidence as the turn starts;
//   - Stop (turn_id, last_assistant_message): the turn end;
//   - PostModelRequest (status, error, token_usage): the context reading of
//     each request, and the turn's failure (no Stop fires on an API error);
//   - PreCompact, PostCompact: the compaction cycle's evidence;
//   - Interrupt: a cancel's evidence (recorded);
//   - PermissionRequest: an approval dialog, named in status (permissionAsked).
var HookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "PostModelRequest", "PreCompact", "PostCompact", "Interrupt", "PermissionRequest"}

// hookTimeout bounds each hook, in seconds (Codex clamps Interrupt to 3;
// PermissionRequest runs before Codex draws its dialog, which a stuck hook
// would hold back).
var hookTimeout = map[string]int{"Interrupt": 3, "PreToolUse": 5, "PostToolUse": 5, "PermissionRequest": 5}

// StatusLine is the footer pantty configures: the run state first (Busy and
// InputReady read it), then the thread id, then the context used.
var StatusLine = []string{"run-state", "thread-id", "context-used"}

// AutoCompactOutOfReach is model_auto_compact_token_limit for a seat: far above
// any context window, so no configured limit makes Codex compact early. It does
// not stop Codex at the window's edge: Codex clamps the limit to 90% of the
// model's window (measured on 0.171.0, e2e_autocompact_test.go), and that
// boundary is caught by the PreCompact hook like any boundary pantty did not
// choose.
const AutoCompactOutOfReach = int64(1) << 60

// HooksJSON is the hooks file pantty writes into the seat's CODEX_HOME.
func HooksJSON(pantty string, s state.Seat, activity bool) ([]byte, error) {
	events := append([]string{}, HookEvents...)
	if activity {
		events = append(events, "PreToolUse", "PostToolUse")
	}
	hooks := map[string]any{}
	for _, ev := range events {
		h := map[string]any{"type": "command", "command": hookCommand(pantty, s)}
		if t := hookTimeout[ev]; t > 0 {
			h["timeout"] = t
		}
		hooks[ev] = []any{map[string]any{"hooks": []any{h}}}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	return append(b, '\n'), err
}

func hookCommand(pantty string, s state.Seat) string {
	return launch.HookCommand(pantty, s, "--codex-hook")
}

// NotifyArgv is Codex's notify program for the seat: Codex appends one JSON
// argument per finished turn (RunNotify).
func NotifyArgv(pantty string, s state.Seat) []string {
	return []string{pantty, "--home", s.Home, "hook", "--seat", s.Name, "--codex-notify"}
}

// PrepareHome makes the seat's CODEX_HOME ready for an unattended launch:
//
//   - hooks.json with pantty's hooks (HookEvents);
//   - config.toml keeps everything already in it (the person's provider and
//     model settings, what Codex itself records) and sets what a seat needs:
//     notify, the footer status line, the workdir trusted (no trust dialog),
//     model_auto_compact_token_limit out of reach, no update check, and
//     approval_policy "never" unless the file chooses one (an unattended seat
//     must not wait on an approval);
//   - with isolation on, pantty's permission profile as the default
//     (setIsolation: $PANTTY_HOME and credentials unreadable and unwritable);
//   - trust for exactly pantty's own hooks, asked of Codex itself (TrustHooks):
//     without it Codex stops at a "Hooks need review" dialog.
//
// The person's own ~/.codex is never touched (Home is per seat).
func PrepareHome(s state.Seat, c config.Config, pantty string, a state.Authority) error {
	home := Home(s, c)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("codex: CODEX_HOME: %w", err)
	}
	hooks, err := HooksJSON(pantty, s, c.Activity)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(filepath.Join(home, "hooks.json")); err != nil || !bytes.Equal(old, hooks) {
		if err := writeFile(home, "hooks.json", hooks); err != nil {
			return err
		}
	}
	cfg, err := readConfig(home)
	if err != nil {
		return err
	}
	setConfig(cfg, pantty, s, c)
	setIsolation(cfg, a)
	if err := writeConfig(home, cfg); err != nil {
		return err
	}
	env, err := harnessEnv(s, c, home)
	if err != nil {
		return err
	}
	trusted, err := TrustHooks(home, binary(c), c.Workdir, hookCommand(pantty, s), env)
	if err != nil {
		return err
	}
	state := table(table(cfg, "hooks"), "state")
	for key, hash := range trusted {
		table(state, key)["trusted_hash"] = hash
	}
	return writeConfig(home, cfg)
}

// setConfig sets the keys a seat needs (see PrepareHome).
func setConfig(cfg map[string]any, pantty string, s state.Seat, c config.Config) {
	cfg["notify"] = NotifyArgv(pantty, s)
	cfg["model_auto_compact_token_limit"] = AutoCompactOutOfReach
	cfg["check_for_update_on_startup"] = false
	if _, ok := cfg["approval_policy"]; !ok {
		cfg["approval_policy"] = "never"
	}
	table(cfg, "tui")["status_line"] = StatusLine
	table(table(cfg, "projects"), c.Workdir)["trust_level"] = "trusted"
}

// table returns m[key] as a table, creating it (or replacing a non-table).
func table(m map[string]any, key string) map[string]any {
	t, ok := m[key].(map[string]any)
	if !ok {
		t = map[string]any{}
		m[key] = t
	}
	return t
}

func readConfig(home string) (map[string]any, error) {
	cfg := map[string]any{}
	data, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return nil, fmt.Errorf("codex: %s: %v (not overwritten; fix it by hand)", filepath.Join(home, "config.toml"), err)
	}
	return cfg, nil
}

func writeConfig(home string, cfg map[string]any) error {
	var b bytes.Buffer
	b.WriteString("# The seat's Codex config. pantty sets notify, tui.status_line, this workdir's trust,\n" +
		"# model_auto_compact_token_limit, check_for_update_on_startup and hooks.state (its own hooks)\n" +
		"# at every launch and keeps everything else (docs/codex.md).\n")
	if err := toml.NewEncoder(&b).Encode(cfg); err != nil {
		return err
	}
	return writeFile(home, "config.toml", b.Bytes())
}

// writeFile replaces a file of CODEX_HOME atomically, mode 0600, with the
// temp file beside it (CODEX_HOME may be on another file system than the
// seat's tmp directory); like every state write it refuses a symlink at the
// target (fsatomic.WriteFile).
func writeFile(dir, name string, data []byte) error {
	return fsatomic.WriteFile(dir, filepath.Join(dir, name), data)
}

// harnessEnv is the environment the harness (and the trust step) runs with.
func harnessEnv(s state.Seat, c config.Config, home string) ([]string, error) {
	env, err := launch.HarnessEnv(os.Environ(), s, c, map[string]string{"CODEX_HOME": home})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out, nil
}

// trustTimeout bounds the trust step (Codex's app server answers in about 0.3 s).
const trustTimeout = 30 * time.Second

// TrustHooks asks Codex itself which hooks it sees for workdir (the app
// server's hooks/list, the listing its own /hooks review uses) and returns, for
// each hook in home/hooks.json whose command is exactly command, its key and
// current hash: what config.toml's [hooks.state."<key>"] trusted_hash must say
// for Codex to run it without the interactive review. pantty never computes a
// hash; it trusts only the hooks it wrote, and any other hook (a project's
// .codex/hooks.json, a plugin's) keeps Codex's own review.
func TrustHooks(home, bin, workdir, command string, env []string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), trustTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir, cmd.Env = workdir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("codex: hook trust: start %s app-server: %w", bin, err)
	}
	defer func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	rd := bufio.NewReaderSize(out, 1<<20)
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := in.Write(append(b, '\n'))
		return err
	}
	recv := func(id int) (json.RawMessage, error) {
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("codex: hook trust: app server: %v (stderr: %s)", err, strings.TrimSpace(stderr.String()))
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != id {
				continue // a notification (config warnings, status)
			}
			if len(m.Error) > 0 && string(m.Error) != "null" {
				return nil, fmt.Errorf("codex: hook trust: app server error: %s", m.Error)
			}
			return m.Result, nil
		}
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"clientInfo": map[string]string{"name": "pantty", "version": "1"}}}); err != nil {
		return nil, err
	}
	if _, err := recv(1); err != nil {
		return nil, err
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized"})
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
		"params": map[string]any{"cwds": []string{workdir}}}); err != nil {
		return nil, err
	}
	res, err := recv(2)
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			Hooks []struct {
				Key         string `json:"key"`
				Command     string `json:"command"`
				SourcePath  string `json:"sourcePath"`
				CurrentHash string `json:"currentHash"`
			} `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return nil, fmt.Errorf("codex: hook trust: hooks/list: %v", err)
	}
	file := filepath.Join(home, "hooks.json")
	trusted := map[string]string{}
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			if samePath(h.SourcePath, file) && h.Command == command && h.Key != "" && strings.HasPrefix(h.CurrentHash, "sha256:") {
				trusted[h.Key] = h.CurrentHash
			}
		}
	}
	if len(trusted) == 0 {
		return nil, fmt.Errorf("codex: hook trust: Codex lists none of pantty's hooks from %s (hooks/list: %s)", file, truncate(string(res), 300))
	}
	return trusted, nil
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// WriteProvider names a model provider in the seat's config.toml and makes it
// the seat's (model_provider, model), keeping everything else: for tests and
// `pantty measure` against a loopback stand-in (baseURL ends in /v1, wire_api
// "responses", the key read from envKey). Codex's own HTTP retries are off
// (request_max_retries, stream_max_retries = 0), so a scripted 429 ends the
// turn at once, like CLAUDE_CODE_MAX_RETRIES=0 for Claude Code.
func WriteProvider(home, name, baseURL, envKey, model string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	cfg, err := readConfig(home)
	if err != nil {
		return err
	}
	cfg["model_provider"] = name
	cfg["model"] = model
	table(cfg, "model_providers")[name] = map[string]any{"name": name, "base_url": baseURL, "wire_api": "responses",
		"env_key": envKey, "request_max_retries": 0, "stream_max_retries": 0}
	return writeConfig(home, cfg)
}
