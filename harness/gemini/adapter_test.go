package gemini

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

// The chat files and screens in testdata were recorded from Gemini CLI
// 0.61.0 on 2026-12-04 (docs/gemini.md): one session, 3adbe5ce-…, with
// turns pasted by hand (m1; a /compress; m2 cancelled; m3 and m9 failed on a
// 401; m4 on a 500, cancelled), resumed launches that started new files for
// the same id, and two pasted in pantty's envelope (m11 answered, m12 failed
// on a 401).
const recorded = "3adbe5ce-e7a4-416f-86cd-bd307b85c083"

func TestChatFilesOfTheSessionInOrder(t *testing.T) {
	files, err := ChatFiles("testdata/home", recorded)
	if err != nil || len(files) != 2 || !strings.Contains(files[0], "T05-13-") || !strings.Contains(files[1], "T05-15-") {
		t.Fatalf("ChatFiles: %v %v", files, err)
	}
	if files, err := ChatFiles("testdata/home", "3adbe5ce-0000-4000-8000-000000000000"); err != nil || len(files) != 0 {
		t.Fatalf("another id with the same first 8 characters: %v %v", files, err)
	}
	if _, err := ChatFiles("testdata/home", "../../etc"); err == nil {
		t.Fatal("a session id that is no UUID was accepted")
	}
}

func TestFindSubmissionAnsweredOrNot(t *testing.T) {
	cases := []struct {
		id, nonce string
		answered  bool
		want      bool
	}{
		{"m11", "0123456789ab", true, true},   // the model replied
		{"m11", "0123456789ab", false, true},  // and the prompt is there
		{"m11", "ffffffffffff", false, false}, // another paste's nonce
		{"m12", "ba9876543210", false, true},  // failed on a 401: the prompt was recorded…
		{"m12", "ba9876543210", true, false},  // …but no reply
		{"m13", "0123456789ab", false, false}, // never sent
	}
	for _, c := range cases {
		got, where, err := findSubmission("testdata/home", recorded, c.id, c.nonce, c.answered)
		if err != nil || got != c.want || got && !strings.Contains(where, ".jsonl:") {
			t.Errorf("findSubmission(%s %s answered=%v) = %v %q %v, want %v", c.id, c.nonce, c.answered, got, where, err, c.want)
		}
	}
}

// TestTurnReplyIsTheChatFilesReply: a message closed by the transcript
// keeps the reply the chat file holds for its finished turn; a turn with
// no reply (m12 failed on a 401) gives none.
func TestTurnReplyIsTheChatFilesReply(t *testing.T) {
	if _, _, reply, err := findTurn("testdata/home", recorded, "m11", "0123456789ab", true); err != nil || reply != "standin received: [pantty] msg=m11 nonce=0123456789ab mentions=0" {
		t.Errorf("m11's reply %q (%v)", reply, err)
	}
	if found, _, reply, err := findTurn("testdata/home", recorded, "m12", "ba9876543210", true); err != nil || found || reply != "" {
		t.Errorf("m12 (no reply): found %v, reply %q (%v)", found, reply, err)
	}
}

func TestCompressedSinceReadsTheSnapshot(t *testing.T) {
	at := func(s string) time.Time { v, _ := time.Parse(time.RFC3339Nano, s); return v }
	if ok, where, err := CompressedSince("testdata/home", recorded, at("2026-12-04T05:14:16.000Z")); !ok || err != nil || where == "" {
		t.Fatalf("the /compress at 05:14:16.992 not found: %v %q %v", ok, where, err)
	}
	if ok, _, _ := CompressedSince("testdata/home", recorded, at("2026-12-04T05:14:17.000Z")); ok {
		t.Fatal("a compression found after the only one")
	}
}

func TestLastUsageAndLastError(t *testing.T) {
	msgs, _, err := history("testdata/home", recorded)
	in, model := lastUsage(msgs)
	if err != nil || in != 12698 || model != "gemini-3.8-flash" {
		t.Fatalf("lastUsage = %d %q %v, want the last reply's 12698 tokens", in, model, err)
	}
	msg := lastError(msgs, "[pantty] msg=m3 nonce=n3 mentions=0\nfail [standin:error=401]")
	if !strings.HasPrefix(msg, "[API Error: ") || ClassifyError(msg) != "authentication_failed" {
		t.Fatalf("lastError(m3) = %q (%s)", msg, ClassifyError(msg))
	}
	if msg := lastError(msgs, "resume probe 2"); msg != "" {
		t.Fatalf("an answered turn has error %q", msg)
	}
}

func TestClassifyError(t *testing.T) {
	for line, want := range map[string]string{
		`[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]`:                 "authentication_failed",
		`[API Error: {"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}]`:                           "authentication_failed",
		`[API Error: {"error":{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED"}}]`: "rate_limit",
		`[API Error: {"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}]`:           "server_error",
		`[API Error: {"error":{"code":503,"message":"The service is currently unavailable."}}]`:                         "overloaded",
		`[API Error: fetch failed]`: "connection_failed",
		`[API Error: {"error":{"code":400,"message":"Request contains an invalid argument."}}]`: "api_error",
	} {
		if got := ClassifyError(line); got != want {
			t.Errorf("ClassifyError(%s) = %s, want %s", line, got, want)
		}
	}
}

func screen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPaneReadings(t *testing.T) {
	a := Adapter{}
	idle, hooks, draft := screen(t, "screen-idle.txt"), screen(t, "screen-hooks-running.txt"), screen(t, "screen-draft.txt")
	if a.Busy(idle) || !a.Busy(hooks) || !a.Busy(screen(t, "screen-api-error.txt")) {
		t.Fatal("Busy: the idle screen busy, or a running one idle")
	}
	if a.Busy("✦ a reply that says (esc to cancel, 2s) in its text\n" + idle) {
		t.Fatal("Busy read a reply's text above the box")
	}
	// InputReady is the box alone: an "Executing Hooks" line above it is a
	// display timer (docs/gemini.md); a turn running is Busy's to say.
	if !a.InputReady(idle) || !a.InputReady(hooks) || a.InputReady("") {
		t.Fatal("InputReady: want the box ready under a hooks line, not on a blank pane")
	}
	if text, ok := a.Composer(idle); !ok || text != "" {
		t.Fatalf("Composer(idle) = %q %v, want the placeholder as empty", text, ok)
	}
	if text, ok := a.Composer(draft); !ok || text != "draft line one\nline two" {
		t.Fatalf("Composer(draft) = %q %v", text, ok)
	}
	// --approval-mode yolo draws its box with " * " under a "YOLO Ctrl+Y"
	// line (Gemini CLI 0.61.0, 2026-12-05): the same box.
	if yolo := screen(t, "screen-yolo.txt"); !a.InputReady(yolo) || a.Busy(yolo) {
		t.Fatal("InputReady: the yolo mode's idle box is not ready")
	} else if text, ok := a.Composer(yolo); !ok || text != "" {
		t.Fatalf("Composer(yolo) = %q %v, want empty", text, ok)
	}
	if _, ok := a.Composer("no box here"); ok {
		t.Fatal("Composer found a box on a pane without one")
	}
}

// TestSettingsKeepWhatIsThereAndSetWhatASeatNeeds: PrepareHome keeps a
// person's settings.json keys, sets what a seat needs in it and at the
// system scope, and puts pantty's hooks only at the system scope (hooks in
// both would run twice; the user scope's hooks table was pantty's).
func TestSettingsKeepWhatIsThereAndSetWhatASeatNeeds(t *testing.T) {
	s, err := state.Open(filepath.Join(t.TempDir(), "pantty"), "g1")
	if err != nil {
		t.Fatal(err)
	}
	c := config.Config{Env: map[string]string{"GEMINI_CLI_HOME": filepath.Join(t.TempDir(), "gh")}}
	home := Home(s, c)
	if err := os.MkdirAll(filepath.Dir(SettingsPath(home)), 0o700); err != nil {
		t.Fatal(err)
	}
	// A person's own hook, and pantty's from before its hooks moved (an
	// older binary's path).
	person := `{"security":{"auth":{"selectedType":"oauth-personal"}},"model":{"name":"gemini-3.8-pro"},` +
		`"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"my-linter"}]}],` +
		`"AfterAgent":[{"hooks":[{"type":"command","command":"/old/pantty --home H hook --seat g1 --gemini-hook"}]}],` +
		`"BeforeAgent":[{"matcher":"*","hooks":[{"type":"command","command":"/old/pantty --home H hook --seat g1 --gemini-hook"},{"type":"command","command":"my-notes"}]}]}}`
	if err := os.WriteFile(SettingsPath(home), []byte(person), 0o600); err != nil {
		t.Fatal(err)
	}
	// The machine's own system settings: kept under pantty's keys.
	admin := filepath.Join(t.TempDir(), "admin.json")
	// With comments (the CLI strips them), hooks switched off and pantty's
	// command disabled by name.
	if err := os.WriteFile(admin, []byte("// the admin's policy\n"+`{"telemetry":{"enabled":false},"ui":{"escapePastedAtSymbols":false}, /* "x": 1 */`+
		`"hooksConfig":{"enabled":false,"disabled":["audit-off","/bin/pantty --home '`+s.Home+`' hook --seat g1 --gemini-hook"]},`+
		`"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"audit-tool // not a comment"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SystemSettingsEnv, admin)
	if err := PrepareHome(s, c, "/bin/pantty"); err != nil {
		t.Fatal(err)
	}
	read := func(path string) map[string]any {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := map[string]any{}
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	user, system := read(SettingsPath(home)), read(SystemSettingsPath(s))
	needs := []string{`"compressionThreshold":1`, `"escapePastedAtSymbols":true`, `"showCompatibilityWarnings":false`, `"retryFetchErrors":false`,
		`"folderTrust":{"enabled":false}`, `"enableAutoUpdate":false`, `"usageStatisticsEnabled":false`}
	for name, cfg := range map[string]map[string]any{"settings.json": user, "the system scope": system} {
		b, _ := json.Marshal(cfg)
		for _, want := range needs {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %s: %s", name, want, b)
			}
		}
	}
	if b, _ := json.Marshal(user); !strings.Contains(string(b), `"selectedType":"oauth-personal"`) || !strings.Contains(string(b), `"name":"gemini-3.8-pro"`) ||
		!strings.Contains(string(b), "my-linter") || !strings.Contains(string(b), "my-notes") || strings.Contains(string(b), "--gemini-hook") {
		t.Errorf("settings.json: want the person's keys and hooks kept (also one beside pantty's in a definition) and pantty's hooks gone: %s", b)
	}
	if hc, _ := system["hooksConfig"].(map[string]any); hc["enabled"] != true || fmt.Sprint(hc["disabled"]) != "[audit-off]" {
		t.Errorf("system hooksConfig: want hooks enabled and only the admin's own hook disabled: %v", hc)
	}
	hooks, _ := system["hooks"].(map[string]any)
	if b, _ := json.Marshal(system); len(hooks) != len(HookEvents)+1 || strings.Count(string(b), "--gemini-hook") != len(HookEvents) ||
		!strings.Contains(fmt.Sprint(hooks["BeforeTool"]), "audit-tool // not a comment") || !strings.Contains(string(b), `"telemetry":{"enabled":false}`) {
		t.Errorf("system settings: want the machine's own kept, its hook first, and pantty's hook once per event %v: %s", HookEvents, b)
	}

	// Another seat's own file in the caller's environment is not the
	// machine's: its hooks would run for this seat too.
	other := filepath.Join(t.TempDir(), "pantty", "seats", "g2", "harness", "gemini-system-settings.json")
	if err := os.MkdirAll(filepath.Dir(other), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(`{"hooks":{"BeforeTool":[{"hooks":[{"type":"command","command":"/bin/pantty hook --seat g2 --gemini-hook"}]}]},"x-other-seat":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SystemSettingsEnv, other)
	if err := PrepareHome(s, c, "/bin/pantty"); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(read(SystemSettingsPath(s))); strings.Contains(string(b), "x-other-seat") || strings.Contains(string(b), "g2") {
		t.Errorf("another seat's system settings were merged into this seat's: %s", b)
	}
	// A machine file that does not parse is named as the machine's.
	if err := os.WriteFile(admin, []byte(`{"ui": `), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SystemSettingsEnv, admin)
	if err := PrepareHome(s, c, "/bin/pantty"); err == nil || !strings.Contains(err.Error(), "cannot read the machine's system settings "+admin) {
		t.Errorf("a malformed machine file: %v, want it named", err)
	}

	// seat.toml may not point the CLI elsewhere: pantty's hooks are there.
	c.Env[SystemSettingsEnv] = admin
	if err := PrepareHome(s, c, "/bin/pantty"); err == nil || !strings.Contains(err.Error(), "may not set "+SystemSettingsEnv) {
		t.Errorf("seat.toml env %s: %v, want a refusal", SystemSettingsEnv, err)
	}
	if got := (Adapter{}).Env(s, c)["GEMINI_CLI_SYSTEM_SETTINGS_PATH"]; got != SystemSettingsPath(s) {
		t.Errorf("Env's GEMINI_CLI_SYSTEM_SETTINGS_PATH = %q, want %q", got, SystemSettingsPath(s))
	}
}

func TestPromptIDIsTheSameForBothHooksOfATurn(t *testing.T) {
	a, b := promptID("s1", "[pantty] msg=m1"), promptID("s1", "[pantty] msg=m1")
	if a != b || a == promptID("s2", "[pantty] msg=m1") || a == promptID("s1", "[pantty] msg=m2") || !strings.HasPrefix(a, "g-") {
		t.Fatalf("promptID: %s %s", a, b)
	}
}

// The command door's Enter waits for CommandSettled: 30 ms after a paste of
// /compress the pane still lists all 41 commands with /clear first (Enter
// would run /clear); 600 ms after, only compress is listed.
func TestCommandSettledOnlyWhenTheListShowsTheCommand(t *testing.T) {
	a := Adapter{}
	unsettled, settled := screen(t, "screen-command-unsettled.txt"), screen(t, "screen-command-settled.txt")
	if a.CommandSettled(unsettled, "/compress") {
		t.Fatal("settled while the whole command list (clear first) shows")
	}
	if !a.CommandSettled(settled, "/compress") {
		t.Fatal("not settled with compress the only completion")
	}
	if a.CommandSettled(settled, "/compact") || a.CommandSettled(screen(t, "screen-idle.txt"), "/compress") {
		t.Fatal("settled with another text in the box")
	}
	if CommandWords["compact"] != "compress" {
		t.Fatal("the door's compact is not sent as /compress")
	}
}

// TestAToolStepIsNotTheTurnsEnd: a turn that runs a tool, as Gemini CLI
// 0.61.0 recorded it (testdata/tool-turn-0.61.0-2026-12-06.jsonl, the jail
// test's shell tool, 2026-12-06), read after each line it wrote: the reply
// with the function call (no text, then its toolCalls once the tool ran)
// and the tool results (a "user" message of functionResponse parts) do not
// answer the prompt; the model's reply after them does, and is the turn's
// reply.
func TestAToolStepIsNotTheTurnsEnd(t *testing.T) {
	const session, id, nonce = "a444d2ef-5730-4904-838b-fe7ff7eda7d2", "j-tool", "8bd1ebf3f228"
	b, err := os.ReadFile("testdata/tool-turn-0.61.0-2026-12-06.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(b), "\n"), "\n")
	home := t.TempDir()
	chats := filepath.Join(home, ".gemini", "tmp", "work", "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(chats, "session-2026-12-06T03-43-a444d2ef.jsonl")
	// Lines 3 (the prompt) to 9: the turn in progress; line 10: its reply.
	for n := 3; n <= len(lines); n++ {
		if err := os.WriteFile(path, []byte(strings.Join(lines[:n], "")), 0o600); err != nil {
			t.Fatal(err)
		}
		prompted, _, err := findSubmission(home, session, id, nonce, false)
		if err != nil || !prompted {
			t.Fatalf("after line %d: the prompt not found (%v)", n, err)
		}
		answered, _, _ := findSubmission(home, session, id, nonce, true)
		msgs, _, _ := history(home, session)
		reply := ""
		if turn := turnOf(msgs, msgs[1].text()); turn == 1 {
			reply = lastReply(msgs, msgs[1].text())
		}
		ended := n >= 10
		if answered != ended {
			t.Errorf("after line %d: answered %v, want %v", n, answered, ended)
		}
		if want := "stand-in: the tool's output arrived"; ended && reply != want {
			t.Errorf("after line %d: reply %q, want %q", n, reply, want)
		}
	}
}
