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
	r := h.RunEnv(map[string]string{"ANTHROPIC_API_KEY": key}, "", "seat", "prepare-home", "ph")
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

	sim := seattest.New(t, "running")
	sim.Start()
	if r := sim.Run("seat", "prepare-home", "running"); r.Code != 3 || !strings.Contains(r.Stderr, sim.Owner().Holder) {
		t.Fatalf("prepare-home on a running seat: want exit 3 naming the holder, got %s", r)
	}
}
