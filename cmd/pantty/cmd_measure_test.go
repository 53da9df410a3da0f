package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMeasureContractFindsTheHarnessOnPath is docs/gates.md's advice after
// an upgrade, run as a user has it: claude on PATH and nothing else — no
// PANTTY_CLAUDE_BIN, no test cache, cron's bare environment. It used to fail
// "no real claude binary: PANTTY_CLAUDE_BIN is unset …" before measuring.
func TestMeasureContractFindsTheHarnessOnPath(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the real Claude Code battery (about 10 s)")
	}
	real, err := claudecode.CachedBinary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI must install Claude Code: scripts/test.sh)", err)
		}
		t.Skip(err)
	}
	dir := tmuxtest.Dir(t)
	onPath := filepath.Join(dir, "bin")
	if err := os.MkdirAll(onPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(onPath, "claude")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(seattest.Binary(t), "measure", "contract", "--harness", "claude-code")
	cmd.Env = []string{"PATH=" + onPath + ":" + seattest.CronPath, "HOME=" + os.Getenv("HOME"),
		"PANTTY_HOME=" + filepath.Join(dir, "home"), "PANTTY_HARNESS_CACHE=" + filepath.Join(dir, "no-cache")}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "claude-code 2.1.328") || !strings.Contains(string(out), "contract measured") {
		t.Fatalf("measure contract with claude only on PATH: %v\n%s", err, out)
	}
}
