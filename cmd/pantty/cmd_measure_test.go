package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/gemini"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMeasureContractFindsTheHarnessOnPath is docs/gates.md's advice after
// an upgrade, run as a user has it, for each real harness: its command on
// PATH and nothing else — no PANTTY_*_BIN, no test cache, cron's bare
// environment. It used to fail "no real claude binary: PANTTY_CLAUDE_BIN is
// unset …" before measuring.
func TestMeasureContractFindsTheHarnessOnPath(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs each real harness's battery (10-60 s each)")
	}
	for _, h := range []struct {
		harness, command, version string
		cached                    func() (string, error)
	}{
		{"claude-code", "claude", "2.1.328", claudecode.CachedBinary},
		{"codex", "codex", "0.171.0", codex.CachedBinary},
		{"gemini-cli", "gemini", "0.61.0", gemini.CachedBinary},
	} {
		t.Run(h.harness, func(t *testing.T) {
			t.Parallel()
			real, err := h.cached()
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%v (CI must install it: scripts/test.sh)", err)
				}
				t.Skip(err)
			}
			dir := tmuxtest.Dir(t)
			onPath := filepath.Join(dir, "bin")
			if err := os.MkdirAll(onPath, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, filepath.Join(onPath, h.command)); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(seattest.Binary(t), "measure", "contract", "--harness", h.harness)
			cmd.Env = []string{"PATH=" + onPath + ":" + seattest.CronPath, "HOME=" + os.Getenv("HOME"),
				"PANTTY_HOME=" + filepath.Join(dir, "home"), "PANTTY_HARNESS_CACHE=" + filepath.Join(dir, "no-cache")}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), h.harness+" "+h.version) || !strings.Contains(string(out), "contract measured") {
				t.Fatalf("measure contract with %s only on PATH: %v\n%s", h.command, err, out)
			}
			t.Logf("measure contract --harness %s, %s on PATH only: %s", h.harness, h.command, time.Since(start).Round(time.Millisecond))
		})
	}
}
