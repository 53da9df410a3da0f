package seat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

func TestRedactMasksCredentialsBeforeCutting(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"curl -H 'Authorization: Bearer sk-abc123def456' x": "sk-abc123def456",
		"API_KEY=abc123 make deploy":                        "abc123",
		"mysql --password hunter2 db":                       "hunter2",
		"export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c8":   "ghp_16C7e42F292c6912E7710c8",
		"echo aGVsbG8gd29ybGQgdGhpcyBpcyBsb25nMTIzNDU2":     "aGVsbG8gd29ybGQgdGhpcyBpcyBsb25nMTIzNDU2",
	}
	for in, secret := range cases {
		if out := state.Redact(in); strings.Contains(out, secret) {
			t.Errorf("Redact(%q) = %q still shows %q", in, out, secret)
		}
	}
	if out := state.Redact("go test ./seat/..."); out != "go test ./seat/..." {
		t.Errorf("ordinary text changed: %q", out)
	}
}

// The activity hook records the real tool call, redacted; off means the hook is
// not in the harness settings at all.
func TestActivityStreamRecordsRedactedToolCalls(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "act", seattest.TOML("activity = true"))
	h.Start()
	h.Send("m1", "[sim:tool=Bash:API_KEY=abc123secretvalue make deploy] please deploy")
	h.WaitFinal(30*time.Second, "m1")
	a, err := h.Seat().ActivityFile().Read()
	if err != nil {
		t.Fatalf("no activity recorded: %v", err)
	}
	if a.Tool != "Bash" || strings.Contains(a.What, "abc123secretvalue") || !strings.Contains(a.What, "make deploy") {
		t.Fatalf("activity %+v: want the Bash command, redacted", a)
	}
	for _, pat := range []string{filepath.Join(h.Seat().EventsDir(), "*ToolUse*"), filepath.Join(h.Seat().SeenDir(), "*ToolUse*")} {
		for _, name := range mustGlob(t, pat) {
			t.Fatalf("an activity event reached the events directory: %s", name)
		}
	}
	if st := h.Status("m1"); st.State != inbox.StateProcessed {
		t.Fatalf("m1: %+v", st)
	}
}

func TestActivityOffAddsNoHookAndABrokenDirectoryFailsNothing(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "quiet")
	h.Start()
	settings, err := os.ReadFile(h.Seat().SettingsPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(settings), "PreToolUse") {
		t.Fatal("activity is off but the settings carry a PreToolUse hook (a process spawn per tool call)")
	}
	// A broken activity record (a directory where the file goes) must not fail
	// the hook: the tool call it observes goes on.
	h2 := seattest.New(t, "broken", seattest.TOML("activity = true"))
	if err := os.MkdirAll(filepath.Join(h2.Seat().Dir, "activity.toml"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := h2.RunStdin(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, "hook", "--seat", "broken")
	if r.Code != 0 || r.Stdout != "" {
		t.Fatalf("activity hook with a broken record: %s", r)
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
