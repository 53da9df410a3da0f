package standin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/gemini/standin"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if a test leaves a tmux server or a gemini
// process behind.
func TestMain(m *testing.M) { os.Exit(tmuxtest.LeakCheck(m)) }

// geminiVersion is the Gemini CLI scripts/test.sh installs and docs/gemini.md
// measured.
const geminiVersion = "0.61.0"

// settings is what the measurement of 2026-12-04 ran with: API-key auth (no
// dialog), folder trust off, no update check, and each hook event appended to
// a file (HOOKS is replaced by its path).
const settings = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false},
  "hooks": {
    "BeforeAgent": [{"hooks": [{"type": "command", "command": "cat >> HOOKS; echo >> HOOKS"}]}],
    "AfterAgent": [{"hooks": [{"type": "command", "command": "cat >> HOOKS; echo >> HOOKS"}]}]
  }
}`

// TestRealGeminiCLICompletesATurn: the real Gemini CLI, pointed at the
// stand-in by GOOGLE_GEMINI_BASE_URL and given its settings by
// GEMINI_CLI_HOME, takes a bracketed paste and a separate Enter in a tmux pane
// (the driver's paste), asks the router (answered with JSON), streams the
// turn from the stand-in, and its hooks report the exact prompt and the
// stand-in's reply.
func TestRealGeminiCLICompletesATurn(t *testing.T) {
	bin, err := seat.HarnessBinary("gemini", "PANTTY_GEMINI_BIN", "gemini", "node_modules", ".bin", "gemini")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI must install Gemini CLI %s: scripts/test.sh)", err, geminiVersion)
		}
		t.Skipf("%v; run scripts/test.sh to install Gemini CLI %s", err, geminiVersion)
	}
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(tmuxtest.Dir(t), "requests.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	home, work := tmuxtest.Dir(t), tmuxtest.Dir(t)
	hooks := filepath.Join(home, "hooks.jsonl")
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(strings.ReplaceAll(settings, "HOOKS", hooks)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(home); err != nil {
		t.Fatal(err)
	}

	tm := tmuxtest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pane, err := tm.NewSession(ctx, tmux.NewSessionOpts{Name: "gemini", Dir: work, Argv: []string{bin},
		Env: []string{"HOME=" + home, "GEMINI_CLI_HOME=" + home, "GEMINI_API_KEY=any-key", "GOOGLE_GEMINI_BASE_URL=" + api.URL(),
			"PATH=" + os.Getenv("PATH"), "TERM=xterm-256color"}})
	if err != nil {
		t.Fatal(err)
	}
	// Readiness is the input box: there is no hook for it in this test's
	// settings, and a paste before the CLI reads its input would be lost.
	waitFor(t, w, ctx, "the input box", func() bool {
		screen, _ := tm.Capture(ctx, pane.ID)
		return strings.Contains(screen, "Type your message")
	}, func() string { s, _ := tm.Capture(ctx, pane.ID); return s })

	prompt := "[pantty] msg=g1 nonce=abc123 mentions=0\nhello from the board"
	if err := tm.Paste(ctx, pane.ID, []byte(prompt)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the paste's quiet time before Enter, as the driver's paste_settle
	if err := tm.SendKeys(ctx, pane.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	var after map[string]any
	waitFor(t, w, ctx, "the AfterAgent hook", func() bool {
		after = hookEvent(hooks, "AfterAgent")
		return after != nil
	}, func() string { s, _ := tm.Capture(ctx, pane.ID); return s })

	before := hookEvent(hooks, "BeforeAgent")
	if before == nil || before["prompt"] != prompt || before["session_id"] == "" {
		t.Fatalf("BeforeAgent: %v", before)
	}
	if after["prompt_response"] != "standin received: [pantty] msg=g1 nonce=abc123 mentions=0" {
		t.Fatalf("AfterAgent: %v", after)
	}
	var turns, routers int
	for _, r := range api.Requests() {
		switch {
		case r.Kind == "turn" && r.NewInput == prompt:
			turns++
		case r.Kind == "router":
			routers++
		}
	}
	if turns != 1 || routers == 0 {
		t.Fatalf("requests at the stand-in: %d turn(s) carrying the prompt, %d router request(s): %+v", turns, routers, api.Requests())
	}
}

// waitFor waits on fsnotify events in the watched directory (and on the
// pane, which has no event: a 250 ms look) until cond holds.
func waitFor(t *testing.T, w *fsnotify.Watcher, ctx context.Context, what string, cond func() bool, screen func() string) {
	t.Helper()
	tick := time.NewTicker(250 * time.Millisecond) // a pane's text changes without any event
	defer tick.Stop()
	for !cond() {
		select {
		case <-w.Events:
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no %s within the limit; the pane:\n%s", what, screen())
		}
	}
}

// hookEvent returns the last payload of the hook event named in the file.
func hookEvent(path, name string) map[string]any {
	b, _ := os.ReadFile(path)
	var found map[string]any
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(line, &ev) == nil && ev["hook_event_name"] == name {
			found = ev
		}
	}
	return found
}
