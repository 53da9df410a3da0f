package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

var ad claudecode.Adapter

const sid = "66666666-2222-4333-8444-555555555555"

func TestArgvFirstLaunchAndResume(t *testing.T) {
	l := harness.Launch{SessionID: sid, Settings: "/s/settings.json", Pantty: "/bin/pantty",
		Config: config.Config{Model: "opus", PermissionMode: "default", Args: []string{"--verbose"}}}
	first, err := ad.Argv(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "--settings", "/s/settings.json", "--session-id", sid, "--model", "opus", "--permission-mode", "default", "--verbose"}
	if !slices.Equal(first, want) {
		t.Fatalf("first launch %q, want %q", first, want)
	}
	l.Resume = true
	l.Config.Command = "/opt/claude"
	again, _ := ad.Argv(l)
	want = []string{"/opt/claude", "--settings", "/s/settings.json", "--resume", sid, "--model", "opus", "--permission-mode", "default", "--verbose"}
	if !slices.Equal(again, want) {
		t.Fatalf("resume %q, want %q (the whole flag set again)", again, want)
	}
}

func TestArgvRefusesFlagsPanttyOwns(t *testing.T) {
	for _, a := range []string{"--resume", "-r", "--session-id=x", "--settings", "-c", "--continue", "-p", "--print", "--fork-session"} {
		l := harness.Launch{SessionID: sid, Settings: "/s", Config: config.Config{Args: []string{a}}}
		if _, err := ad.Argv(l); err == nil {
			t.Errorf("args %q accepted", a)
		}
	}
	if _, err := ad.Argv(harness.Launch{SessionID: "not-a-uuid", Settings: "/s"}); err == nil {
		t.Error("a session id claude refuses was accepted")
	}
}

func TestEnvHasNoNestedMarkers(t *testing.T) {
	env := ad.Env(state.Seat{}, config.Config{})
	if env["DISABLE_AUTOUPDATER"] != "1" || env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] != "1" {
		t.Fatalf("env %v", env)
	}
	for _, k := range []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT"} {
		if _, ok := env[k]; ok {
			t.Errorf("adapter sets the nested marker %s", k)
		}
	}
}

func TestProjectDir(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/meas/work":        "-tmp-meas-work",
		"/home/a.b/my_repo-x":   "-home-a-b-my-repo-x",
		"/srv/ünïcode/dir name": "-srv--n-code-dir-name", // one '-' per UTF-16 unit, as in JavaScript
	} {
		if got := claudecode.ProjectDir(in); got != want {
			t.Errorf("ProjectDir(%q) = %q, want %q", in, got, want)
		}
	}
}

// seatWith puts the measured transcript where Claude Code files it for workdir
// under a private HOME, and returns the seat's config.
func seatWith(t *testing.T, project string) config.Config {
	t.Helper()
	home := t.TempDir()
	c := config.Config{Workdir: "/tmp/meas/work", Env: map[string]string{"HOME": home}}
	if project == "" {
		project = claudecode.ProjectDir(c.Workdir)
	}
	dir := filepath.Join(home, ".claude", "projects", project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "transcript-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sid+".jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSessionExistsIsTheTranscript(t *testing.T) {
	c := seatWith(t, "")
	if ok, err := ad.SessionExists(state.Seat{}, c, sid); !ok || err != nil {
		t.Fatalf("SessionExists = %v, %v", ok, err)
	}
	if ok, err := ad.SessionExists(state.Seat{}, c, "77777777-2222-4333-8444-555555555555"); ok || err != nil {
		t.Fatalf("an unknown id: %v, %v", ok, err)
	}
	// Filed under another project name (a symlinked workdir): found by its id.
	if ok, _ := ad.SessionExists(state.Seat{}, seatWith(t, "-elsewhere"), sid); !ok {
		t.Fatal("a transcript under another project directory was not found")
	}
	// A transcript without a conversation (claude killed before its first
	// flush): neither --resume nor --session-id would start, so it is set aside
	// and the id starts afresh.
	empty := seatWith(t, "")
	path, _, _ := claudecode.TranscriptPath(empty, sid)
	os.WriteFile(path, []byte(`{"type":"mode","mode":"normal","sessionId":"`+sid+`"}`+"\n"+
		`{"type":"permission-mode","permissionMode":"auto","sessionId":"`+sid+`"}`+"\n"), 0o600)
	if ok, err := ad.SessionExists(state.Seat{}, empty, sid); ok || err != nil {
		t.Fatalf("a transcript without a conversation: %v, %v", ok, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the empty transcript was not set aside: %v", err)
	}
	if aside, _ := filepath.Glob(path + ".no-conversation-*"); len(aside) != 1 {
		t.Fatalf("set-aside copies: %v", aside)
	}
	// CLAUDE_CONFIG_DIR moves the whole state directory.
	moved := seatWith(t, "")
	moved.Env["CLAUDE_CONFIG_DIR"] = t.TempDir()
	if ok, _ := ad.SessionExists(state.Seat{}, moved, sid); ok {
		t.Fatal("CLAUDE_CONFIG_DIR ignored")
	}
}

// The fixture is a real 2.1.328 transcript (big rows cut): t1 and t5 finished,
// t2 was interrupted after text streamed, t3 before anything streamed, and t4
// ended in a 429.
func TestFindTurnOnTheMeasuredTranscript(t *testing.T) {
	c := seatWith(t, "")
	for _, tc := range []struct {
		id, nonce string
		found     bool
		line      string
	}{
		{"t1", "0123456789ab", true, ":26"},
		{"t2", "1123456789ab", false, ""},
		{"t3", "2123456789ab", false, ""},
		{"t4", "3123456789ab", false, ""},
		{"t5", "4123456789ab", true, ":48"},
		{"t1", "ffffffffffff", false, ""}, // another paste of t1
		{"t9", "0123456789ab", false, ""},
	} {
		found, where, err := ad.FindTurn(state.Seat{}, c, sid, tc.id, tc.nonce)
		if err != nil || found != tc.found || !strings.HasSuffix(where, tc.line) {
			t.Errorf("FindTurn(%s, %s) = %v %q %v, want %v at %q", tc.id, tc.nonce, found, where, err, tc.found, tc.line)
		}
	}
	if found, _, err := ad.FindTurn(state.Seat{}, c, "77777777-2222-4333-8444-555555555555", "t1", "0123456789ab"); found || err != nil {
		t.Fatalf("no transcript: %v %v", found, err)
	}
}

// TurnReply reads the finished turn's reply from the same transcript: t1's
// and t5's assistant text; nothing for the interrupted t2 (whose text had
// streamed), the refused t4 (a synthetic API error row) or an unknown nonce.
func TestTurnReplyOnTheMeasuredTranscript(t *testing.T) {
	c := seatWith(t, "")
	for _, tc := range []struct{ id, nonce, want string }{
		{"t1", "0123456789ab", "standin received: [pantty] msg=t1 nonce=0123456789ab mentions=0"},
		{"t2", "1123456789ab", ""},
		{"t4", "3123456789ab", ""},
		{"t5", "4123456789ab", "standin received: [pantty] msg=t5 nonce=4123456789ab mentions=0"},
		{"t1", "ffffffffffff", ""},
	} {
		if got, err := ad.Caps().TurnReply(state.Seat{}, c, sid, tc.id, tc.nonce); err != nil || got != tc.want {
			t.Errorf("TurnReply(%s, %s) = %q (%v), want %q", tc.id, tc.nonce, got, err, tc.want)
		}
	}
}

// A turn with a tool step has two assistant messages, each written a row
// per content block: the reply is the last message's text, not the first
// step's "let me look". The rows are built in the measured shapes (none of
// the measured turns ran a tool).
func TestTurnReplyIsTheLastMessagesText(t *testing.T) {
	c := seatWith(t, "")
	path := filepath.Join(c.Env["HOME"], ".claude", "projects", claudecode.ProjectDir(c.Workdir), sid+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		`{"type":"user","promptId":"p6","message":{"role":"user","content":"[pantty] msg=t6 nonce=5123456789ab mentions=0\n<<<pantty-5123456789ab\nlook it up\npantty-5123456789ab>>>"}}`,
		`{"type":"assistant","message":{"id":"m6a","model":"claude-opus-5-5","content":[{"type":"text","text":"let me look"}]}}`,
		`{"type":"assistant","message":{"id":"m6a","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"42"}]}}`,
		`{"type":"assistant","message":{"id":"m6b","model":"claude-opus-5-5","content":[{"type":"thinking","thinking":"it is 42"}]}}`,
		`{"type":"assistant","message":{"id":"m6b","model":"claude-opus-5-5","content":[{"type":"text","text":"it is 42"}]}}`,
		`{"type":"system","subtype":"stop_hook_summary"}`,
		// A turn whose last message has no text keeps none, not the step's.
		`{"type":"user","promptId":"p7","message":{"role":"user","content":"[pantty] msg=t7 nonce=6123456789ab mentions=0\n<<<pantty-6123456789ab\nlook again\npantty-6123456789ab>>>"}}`,
		`{"type":"assistant","message":{"id":"m7a","model":"claude-opus-5-5","content":[{"type":"text","text":"let me look again"}]}}`,
		`{"type":"assistant","message":{"id":"m7b","model":"claude-opus-5-5","content":[{"type":"thinking","thinking":"nothing to say"}]}}`,
		`{"type":"system","subtype":"stop_hook_summary"}`,
	} {
		if _, err := f.WriteString(row + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	if got, err := ad.Caps().TurnReply(state.Seat{}, c, sid, "t6", "5123456789ab"); err != nil || got != "it is 42" {
		t.Fatalf("t6's reply %q (%v), want the last message's text", got, err)
	}
	if got, err := ad.Caps().TurnReply(state.Seat{}, c, sid, "t7", "6123456789ab"); err != nil || got != "" {
		t.Fatalf("t7's reply %q (%v), want none: its last message has no text", got, err)
	}
}

// FindPrompt finds every prompt the harness recorded, finished or not: the
// interrupted t2 and t3 and the refused t4 too; never another paste or id.
func TestFindPromptOnTheMeasuredTranscript(t *testing.T) {
	c := seatWith(t, "")
	for _, tc := range []struct {
		id, nonce string
		found     bool
	}{
		{"t1", "0123456789ab", true},
		{"t2", "1123456789ab", true},
		{"t3", "2123456789ab", true},
		{"t4", "3123456789ab", true},
		{"t5", "4123456789ab", true},
		{"t1", "ffffffffffff", false},
		{"t9", "0123456789ab", false},
	} {
		found, where, err := ad.FindPrompt(state.Seat{}, c, sid, tc.id, tc.nonce)
		if err != nil || found != tc.found || found == (where == "") {
			t.Errorf("FindPrompt(%s, %s) = %v %q %v, want %v", tc.id, tc.nonce, found, where, err, tc.found)
		}
	}
}

func screen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screen-"+name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestScreens(t *testing.T) {
	idle := screen(t, "idle")
	quoting := strings.Replace(idle, "/tmp/meas/work\n", "/tmp/meas/work\n\n● press esc to interrupt a turn\n", 1)
	for _, tc := range []struct {
		name, screen string
		busy, ready  bool
		box          string
	}{
		{"idle", idle, false, true, ""},
		{"busy", screen(t, "busy"), true, true, ""},
		{"interrupted after streaming", screen(t, "interrupted-streamed"), false, true, ""},
		{"prompt put back", screen(t, "putback"), false, true, "[Pasted text #4 +3 lines]"},
		{"after a 429", screen(t, "placeholder"), false, true, ""},
		// After a 401 or a billing refusal the hint differs: its words as the
		// driver read them from the real pane (outage e2e, 2026-12-05), in the
		// 429 capture's frame.
		{"after a 401", screen(t, "placeholder-401"), false, true, ""},
		{"a reply quoting the footer", quoting, false, true, ""},
		{"blank (just launched)", "\n\n\n", false, false, ""},
		{"banner only", " ▐▛███▛█   Claude Code v2.1.328\n▝▜██████▀  Opus 5.5 · API Usage Billing\n", false, false, ""},
	} {
		if got := ad.Busy(tc.screen); got != tc.busy {
			t.Errorf("%s: Busy = %v", tc.name, got)
		}
		if got := ad.InputReady(tc.screen); got != tc.ready {
			t.Errorf("%s: InputReady = %v", tc.name, got)
		}
		if got, _ := ad.Composer(tc.screen); got != tc.box {
			t.Errorf("%s: Composer = %q, want %q", tc.name, got, tc.box)
		}
	}
	if text, ok := claudecode.Composer(screen(t, "placeholder")); !ok || text != claudecode.Placeholder {
		t.Errorf("raw composer after a 429: %q %v", text, ok)
	}
	// The trust question of 2.1.328 (captured 2026-12-05 in a fresh HOME with
	// the folder not trusted): one rule above it, no box. The driver sends no
	// key to such a screen.
	if _, ok := ad.Composer(screen(t, "dialog-trust")); ok || ad.InputReady(screen(t, "dialog-trust")) || ad.Busy(screen(t, "dialog-trust")) {
		t.Errorf("the trust dialog reads as an input box")
	}
}

func TestCommandsLeaveOutClear(t *testing.T) {
	cmds := ad.Commands()
	if !slices.Contains(cmds, "compact") || slices.Contains(cmds, "clear") {
		t.Fatalf("Commands = %v: want compact, never clear (it changes the session id)", cmds)
	}
	if _, err := harness.NewCommand(ad, "clear", ""); err == nil {
		t.Fatal("the command door accepts /clear")
	}
	if c := ad.Caps(); c.InputReady == nil || c.Composer == nil || c.CommandAnswer == nil || c.ProbeIsolation == nil || c.StartsLazily {
		t.Fatalf("capabilities: want input-ready, composer, command answers and isolation, not a lazy start: %+v", c)
	}
	if ad.PasteSettle().Duration.Milliseconds() != 150 || ad.Facts() != guard.DefaultDispatchFacts {
		t.Fatalf("paste settle %v, facts %+v", ad.PasteSettle(), ad.Facts())
	}
}

func TestPrepareHomeMergesAndIsIdempotent(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude.json")
	os.WriteFile(path, []byte(`{"theme":"dark","projects":{"/other":{"allowedTools":["x"]}},"customApiKeyResponses":{"approved":["old"]}}`), 0o600)
	key := "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
	for range 2 {
		if err := claudecode.PrepareHome(home, key, "/w/a", "/w/b"); err != nil {
			t.Fatal(err)
		}
	}
	var cfg struct {
		Theme                  string `json:"theme"`
		HasCompletedOnboarding bool   `json:"hasCompletedOnboarding"`
		CustomAPIKeyResponses  struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
		Projects map[string]map[string]any `json:"projects"`
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Theme != "dark" || !cfg.HasCompletedOnboarding || !slices.Equal(cfg.CustomAPIKeyResponses.Approved, []string{"old", key[len(key)-20:]}) ||
		cfg.Projects["/w/a"]["hasTrustDialogAccepted"] != true || cfg.Projects["/w/b"]["hasTrustDialogAccepted"] != true ||
		cfg.Projects["/other"]["allowedTools"] == nil {
		t.Fatalf(".claude.json %s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	os.WriteFile(path, []byte("{broken"), 0o600)
	if err := claudecode.PrepareHome(home, key); err == nil {
		t.Fatal("a corrupt .claude.json was overwritten")
	}
}

// A workdir below a git repository's root: Claude Code asks about the root, so
// the root is trusted too; a workdir that is itself a root adds nothing else.
func TestPrepareHomeTrustsTheEnclosingGitRoot(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	sub := filepath.Join(repo, "services", "api")
	for _, d := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	if err := claudecode.PrepareHome(home, "sk-ant-test-000000000000000000000000", sub, repo); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Projects map[string]struct {
			Trusted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Projects) != 2 || !cfg.Projects[sub].Trusted || !cfg.Projects[repo].Trusted {
		t.Fatalf("projects: %+v, want exactly %s and its git root %s trusted", cfg.Projects, sub, repo)
	}
}
