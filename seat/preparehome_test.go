package seat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

// `pantty seat prepare-home` answers Claude Code's first-run dialogs ahead in
// the HOME the seat's harness will see, with the key it will see (pass_env from
// the caller), prints what it wrote, and keeps what the file already held.
// While a driver holds a seat it refuses (exit 3): the harness rewrites its
// own files as it runs.
func TestPrepareHomeAnswersClaudesDialogsAhead(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "claude-home")
	h := seattest.NewHarness(t, "ph", "claude-code", seattest.Env(map[string]string{"HOME": home}),
		seattest.TOML(`pass_env = ["ANTHROPIC_API_KEY"]`))
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"theme":"dark"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "sk-ant-api03-prepare-0123456789abcdefghij"
	keyEnv := map[string]string{"ANTHROPIC_API_KEY": key}
	// --dry-run says what would change in this home (the person's own) and
	// writes nothing.
	d := h.RunEnv(keyEnv, "", "seat", "prepare-home", "--dry-run", "ph")
	if d.Code != 0 || !strings.Contains(d.Stdout, "would change: ") || !strings.Contains(d.Stdout, "is not trusted") ||
		!strings.Contains(d.Stdout, "pantty seat prepare-home ph") || strings.Contains(d.Stdout, key) {
		t.Fatalf("prepare-home --dry-run: %s", d)
	}
	if data, _ := os.ReadFile(filepath.Join(home, ".claude.json")); string(data) != `{"theme":"dark"}` {
		t.Fatalf("--dry-run changed .claude.json: %s", data)
	}
	r := h.RunEnv(keyEnv, "", "seat", "prepare-home", "ph")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hasTrustDialogAccepted") || !strings.Contains(r.Stdout, "…ghij") || strings.Contains(r.Stdout, key) {
		t.Fatalf("prepare-home: want exit 0 naming what it wrote (never the key), got %s", r)
	}
	var cfg struct {
		Theme      string `json:"theme"`
		Onboarding bool   `json:"hasCompletedOnboarding"`
		Keys       struct {
			Approved []string `json:"approved"`
		} `json:"customApiKeyResponses"`
		Projects map[string]struct {
			Trust bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	data, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil || json.Unmarshal(data, &cfg) != nil {
		t.Fatalf(".claude.json: %v %s", err, data)
	}
	if cfg.Theme != "dark" || !cfg.Onboarding || len(cfg.Keys.Approved) != 1 || cfg.Keys.Approved[0] != key[len(key)-20:] || !cfg.Projects[h.Work].Trust {
		t.Fatalf(".claude.json after prepare-home: %s", data)
	}
	// The person's file as it was is kept beside it, and named.
	backups, _ := filepath.Glob(filepath.Join(home, ".claude.json.before-pantty-*"))
	if len(backups) != 1 || !strings.Contains(r.Stdout, backups[0]) {
		t.Fatalf("backups %v, output %s: want one, named", backups, r.Stdout)
	}
	if old, _ := os.ReadFile(backups[0]); string(old) != `{"theme":"dark"}` {
		t.Fatalf("the backup holds %s", old)
	}
	// Prepared: a second run changes nothing and keeps no second copy.
	again := h.RunEnv(keyEnv, "", "seat", "prepare-home", "ph")
	if again.Code != 0 || !strings.Contains(again.Stdout, "nothing to change") {
		t.Fatalf("prepare-home on a prepared home: %s", again)
	}
	if b, _ := filepath.Glob(filepath.Join(home, ".claude.json.before-pantty-*")); len(b) != 1 {
		t.Fatalf("a second run kept another copy: %v", b)
	}

	sim := seattest.New(t, "running")
	sim.Start()
	if r := sim.Run("seat", "prepare-home", "running"); r.Code != 3 || !strings.Contains(r.Stderr, sim.Owner().Holder) {
		t.Fatalf("prepare-home on a running seat: want exit 3 naming the holder, got %s", r)
	}
}
