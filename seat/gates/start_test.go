package gates

// `pantty seat start` and `pantty gates` run as real processes. The registry
// override ($PANTTY_GATES_REGISTRY) makes the simulator fail a gate.

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
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
	if _, err := h.Seat().IntentFile().Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused start wrote intent.toml (%v)", err)
	}
	if _, err := h.Seat().OwnerFile().Read(); !errors.Is(err, fs.ErrNotExist) {
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

// TestStartJudgesTheInstalledVersion: seat start's gates ask the seat's
// harness binary its version (once per binary change) and judge that version;
// an upgrade to a version no registry range covers refuses the resident start
// and says which version and what to do.
func TestStartJudgesTheInstalledVersion(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	bin := filepath.Join(dir, "claude")
	say := func(version string) {
		if err := tmuxtest.WriteExecutable(bin, []byte("#!/bin/sh\necho '"+version+" (Claude Code)'\n")); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Config{Name: "upgraded", Harness: "claude-code", Shape: config.ShapeResident, Command: bin}
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)

	say("2.1.328")
	v, _, err := CheckStart(home, cfg, now)
	if err != nil || v.Version != "2.1.328" || !strings.Contains(v.VersionNote, bin) {
		t.Fatalf("installed 2.1.328: version %q (%s), %v", v.Version, v.VersionNote, err)
	}

	say("3.0.0")
	_, _, err = CheckStart(home, cfg, now)
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "claude-code 3.0.0") || !strings.Contains(err.Error(), "no entry covering") {
		t.Fatalf("installed 3.0.0 (unmeasured): want a refusal naming the version, got %v", err)
	}

	// [gates] unmeasured = "warn": the same start runs, and says so.
	cfg.Gates.Unmeasured = config.UnmeasuredWarn
	_, warnings, err := CheckStart(home, cfg, now)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "3.0.0 has no measurement") || !strings.Contains(warnings[0], "pantty measure contract --harness claude-code") {
		t.Fatalf("unmeasured = warn: err %v, warnings %q", err, warnings)
	}
}

// TestAMeasurementDoesNotBlockTheSeatItMeasured is the newcomer's path on the
// simulator: a seat runs, `pantty measure dispatch` (the simulator is the
// default) writes local facts, and the seat must start again — judged as
// `pantty gates sim` judges it, from the same facts. It was refused: start
// asked pantty --version and judged the Go version as the simulator's.
func TestAMeasurementDoesNotBlockTheSeatItMeasured(t *testing.T) {
	h := seattest.New(t, "measured")
	h.Start()
	if m := h.Run("measure", "dispatch"); m.Code != 0 {
		t.Fatalf("measure dispatch: %s", m)
	}
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	if r := h.Run("seat", "start", h.Name); r.Code != 0 {
		t.Fatalf("seat start after measure dispatch: %s", r)
	}
	g := h.Run("gates", "sim")
	if g.Code != 0 || !strings.Contains(g.Stdout, "resident allowed") || !strings.Contains(g.Stdout, "from the local facts file") {
		t.Fatalf("pantty gates sim after the measurement:\n%s", g)
	}
}
