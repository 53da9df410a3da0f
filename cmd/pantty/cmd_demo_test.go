package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	// After its own stop the demo says what seat list and status say: stopped.
	for _, want := range []string{"no file was created", "carried the handoff", "session", "every step behaved", "status: phase stopped "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestDemoCleansUpWhenInterrupted: Ctrl-C in the middle of the tour, or its
// reader going away (`pantty demo | head`), stops the demo's seat and removes
// its temporary state; the package's leak check finds any tmux server,
// driver or simulator left behind.
func TestDemoCleansUpWhenInterrupted(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"SIGINT", "closed pipe", "head -3"} {
		t.Run(how, func(t *testing.T) {
			tmp := tmuxtest.Dir(t)
			cmd := exec.Command(seattest.Binary(t), "demo")
			cmd.Env = append(cleanEnv(), "TMPDIR="+tmp)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			// Read until the seat runs and holds its messages (stage 3), or,
			// as `pantty demo | head -3` does, three lines.
			sc := bufio.NewScanner(out)
			for n := 1; sc.Scan() && !strings.HasPrefix(sc.Text(), "== 3."); n++ {
				if how == "head -3" && n == 3 {
					break
				}
			}
			if how == "SIGINT" {
				cmd.Process.Signal(os.Interrupt)
				go func() { io.Copy(io.Discard, out); done <- cmd.Wait() }()
			} else {
				out.Close()
				go func() { done <- cmd.Wait() }()
			}
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("the demo did not end after it was interrupted (%s); stderr: %s", how, stderr.String())
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(stderr.String(), "demo interrupted") {
				t.Fatalf("interrupted demo (%s): want a non-zero exit and the interruption said; got %v, stderr %s", how, err, stderr.String())
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "pantty-demo-*")); len(left) != 0 {
				t.Fatalf("the demo left its temporary state (%s): %v", how, left)
			}
			// Nothing it started outlives it: a `seat stop` the tour had
			// begun when it was interrupted ran on, orphaned, for 20 s.
			if left := tmuxtest.Running(filepath.Join(tmp, "pantty-demo-")); len(left) != 0 {
				t.Fatalf("the demo's processes outlived it (%s):\n%s", how, strings.Join(left, "\n"))
			}
		})
	}
}
