package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
)

// untrust takes back the folder trust PrepareHome gave, so claude starts on its
// trust question ("Quick safety check … ❯ No, exit / Yes, I trust this folder")
// instead of its input box, as a real first start in a new folder does.
func untrust(t *testing.T, home string) {
	t.Helper()
	path := filepath.Join(home, ".claude.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	projects, _ := cfg["projects"].(map[string]any)
	for _, p := range projects {
		if m, ok := p.(map[string]any); ok {
			m["hasTrustDialogAccepted"] = false
		}
	}
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A folder claude would ask "trust this folder?" about never gets that far:
// since start checks the home (harness.CheckHome), the real first start in
// an untrusted folder is refused before anything launches — exit 2, naming
// the folder and the one command that answers the question — and once that
// command is pasted, the next start runs and the message queued meanwhile
// reaches the model once (counted in the stand-in's log). Before the check
// the trust question was the pane's first screen, its highlighted answer
// "No, exit": one Enter retry would have ended the harness (the driver's hold
// for such a screen is pinned by the simulator's dialog tests and
// TestScreens' capture of this very question).
func TestAnUntrustedFolderIsRefusedBeforeItsDialogOnRealClaude(t *testing.T) {
	r := newRig(t, "ccdialog", `ready_timeout = "15s"`)
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	untrust(t, cfg.Env["HOME"])
	r.Send("x1", "queued before the start")
	res := r.Run("seat", "start", r.Name)
	fix := "pantty seat prepare-home " + r.Name
	if res.Code != 2 || !strings.Contains(res.Stderr, "is not trusted") || !strings.Contains(res.Stderr, fix) {
		t.Fatalf("seat start in an untrusted folder: want exit 2 naming it and the fix; got %s", res)
	}
	if r.ServerRunning() {
		t.Fatal("a refused start started a tmux server")
	}
	if p := r.Run(strings.Fields(fix)[1:]...); p.Code != 0 {
		t.Fatalf("the printed fix, pasted: %s", p)
	}
	r.Start()
	// The first screen carries no warning of pantty's own making: 2.1.328
	// showed four "⚠ Deny rule Write(//…) never matches · use Edit(…)" for
	// the settings pantty passes.
	if screen := r.Screen(); strings.Contains(screen, "never matches") || strings.Contains(screen, "Deny rule") {
		t.Errorf("claude's first screen warns about pantty's settings:\n%s", screen)
	}
	r.WaitFinal(90*time.Second, "x1")
	if turns := r.Turns(); turns["x1"] != 1 || r.Status("x1").State != inbox.StateProcessed {
		t.Fatalf("after prepare-home: turns %v, x1 %+v\ndriver.log:\n%s", turns, r.Status("x1"), r.DriverLog())
	}
}
