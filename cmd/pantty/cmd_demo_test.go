package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// cleanEnv is this process's environment without tmux's and pantty's own
// variables, so the demo runs as on a fresh terminal.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX") || strings.HasPrefix(kv, "PANTTY_") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// The README's main-job command runs end to end: every step of the tour checks
// its own outcome and the demo exits non-zero if one misbehaves.
func TestDemoRunsEndToEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, seattest.Binary(t), "demo")
	// TMPDIR under the test root: anything the demo left running would be
	// found by the package's leak check.
	cmd.Env = append(cleanEnv(), "TMPDIR="+tmuxtest.Dir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"no file was created", "carried the handoff", "session", "every step behaved"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
