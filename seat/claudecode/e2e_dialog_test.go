package claudecode_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
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

// The real harness's first screen is a dialog: the adapter recognises no input
// box, seat start does not say started (it names the dialog and the fix), no key
// goes to the pane — its highlighted answer is "No, exit", so one Enter retry
// would have ended the harness — and once a person answers it, the message
// queued meanwhile reaches the model once (counted in the stand-in's log).
func TestADialogAtStartIsLeftToAPersonOnRealClaude(t *testing.T) {
	// Claude asks before it fires SessionStart: the start hears the dialog at
	// ready_timeout (shortened here), and the harness is kept for a person.
	r := newRig(t, "ccdialog", `ready_timeout = "15s"`)
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	untrust(t, cfg.Env["HOME"])
	r.Send("x1", "queued before the start")
	res := r.Run("seat", "start", r.Name)
	if res.Code != 1 || strings.Contains(res.Stdout, "started") || !strings.Contains(res.Stderr, "did not start") ||
		!strings.Contains(res.Stderr, "Quick safety check") || !strings.Contains(res.Stderr, "pantty seat attach "+r.Name) {
		t.Fatalf("seat start on claude's trust question: want exit 1 naming it and the fix; got %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	t.Logf("seat start: %s", strings.TrimSpace(res.Stderr))
	hb, err := r.Seat().HeartbeatFile().Read()
	if err != nil || hb.Phase != seat.PhaseRelay || !strings.Contains(hb.Waiting, "blocked: the harness shows a dialog:") {
		t.Fatalf("heartbeat: %+v (%v)", hb, err)
	}
	if st := r.Status("x1"); st.State != inbox.StateQueued || st.Attempts != 0 {
		t.Fatalf("x1 under the dialog: %+v", st)
	}
	if !strings.Contains(r.Screen(), "Yes, I trust this folder") {
		t.Fatalf("the trust question is gone without a person:\n%s", r.Screen())
	}
	// A person moves to "Yes, I trust this folder" and confirms.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pane := r.Session().PaneID
	if err := r.Tmux().SendKeys(ctx, pane, "Down"); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("Yes highlighted", 10*time.Second, func() bool { return strings.Contains(r.Screen(), "❯ Yes, I trust") })
	if err := r.Tmux().SendKeys(ctx, pane, "Enter"); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	r.WaitFinal(90*time.Second, "x1")
	t.Logf("trust answered → x1 final in %s", time.Since(answered).Round(time.Millisecond))
	if turns := r.Turns(); turns["x1"] != 1 || r.Status("x1").State != inbox.StateProcessed {
		t.Fatalf("after the person answered: turns %v, x1 %+v\ndriver.log:\n%s", turns, r.Status("x1"), r.DriverLog())
	}
}
