package gates

// `pantty seat start` and `pantty gates` run as real processes. The registry
// override ($PANTTY_GATES_REGISTRY) makes the simulator fail a gate.

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

func TestSeatStartRefusesResidentWhereCompactionGateFails(t *testing.T) {
	h := seattest.New(t, "gated")
	reg := writeRegistry(t, simCompactionMet, "[harness.compaction]\nstatus = \"unmet\"")
	env := map[string]string{RegistryEnv: reg}

	r := h.RunEnv(env, "", "seat", "start", h.Name)
	if r.Code != 2 {
		t.Fatalf("seat start: want exit 2 (refused, nothing changed)\n%s", r)
	}
	for _, want := range []string{"the compaction gate fails for sim", "unmet", `shape = "turn"`, "pantty gates sim"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.Stderr)
		}
	}
	if _, err := h.Seat().ReadIntent(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start wrote intent.toml (%v)", err)
	}
	if _, err := h.Seat().ReadOwner(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start left an owner (%v)", err)
	}
	if h.ServerRunning() {
		t.Error("a refused start started a tmux server")
	}

	g := h.RunEnv(env, "", "gates", "sim")
	if g.Code != 0 || !strings.Contains(g.Stdout, "1. compaction FAIL") || !strings.Contains(g.Stdout, "must run turn-spawned") {
		t.Fatalf("pantty gates sim under the same registry:\n%s", g)
	}
}

func TestGatesCommand(t *testing.T) {
	h := seattest.New(t, "shown")
	r := h.Run("gates")
	if r.Code != 0 {
		t.Fatalf("pantty gates: %s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "HARNESS") || !strings.Contains(lines[0], "COMPACTION  CANCEL") {
		t.Fatalf("summary header:\n%s", r.Stdout)
	}
	if !strings.HasPrefix(lines[1], "sim ") || !strings.Contains(lines[1], "resident allowed") ||
		!strings.HasPrefix(lines[3], "codex ") || !strings.Contains(lines[3], "resident allowed") {
		t.Fatalf("summary rows:\n%s", r.Stdout)
	}
	// The simulator has no sandbox: its isolation cell says so, never "available".
	if !strings.Contains(lines[0], "ISOLATION") || !strings.Contains(lines[1], " none ") {
		t.Fatalf("no isolation column, or the simulator claims one:\n%s", r.Stdout)
	}
	if j := h.Run("gates", "codex", "--json"); j.Code != 0 || !strings.Contains(j.Stdout, `"resident_allowed": true`) {
		t.Fatalf("pantty gates codex --json:\n%s", j)
	}
	if u := h.Run("gates", "nosuch"); u.Code != 2 || !strings.Contains(u.Stderr, "sim, claude-code, codex") {
		t.Fatalf("pantty gates nosuch: %s", u)
	}
}
