package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
)

// startPane runs `pantty __exec` on a launch record whose harness is sh -c
// script (with PATH, HOME and env), as tmux would, and returns it with a
// channel that gets its end.
func startPane(t *testing.T, h *seattest.Harness, script string, env map[string]string) (*exec.Cmd, chan error) {
	t.Helper()
	a := h.Seat()
	env["PATH"], env["HOME"] = os.Getenv("PATH"), os.Getenv("HOME")
	if err := a.Write(a.LaunchPath(), seat.LaunchFile{Argv: []string{"/bin/sh", "-c", script}, Dir: h.Work, Env: env}); err != nil {
		t.Fatal(err)
	}
	pane := exec.Command(h.Bin, "__exec", a.LaunchPath())
	pane.Env = h.Env()
	if err := pane.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pane.Wait() }()
	t.Cleanup(func() {
		pane.Process.Kill()
		done <- <-done
	})
	return pane, done
}

// TestPaneProcessEndsLikeItsHarness: what tmux reports for the pane
// (pane_dead_status, pane_dead_signal) is what the harness did, now that the
// pane process is the harness's parent rather than the harness itself.
func TestPaneProcessEndsLikeItsHarness(t *testing.T) {
	h := seattest.New(t, "x")
	for _, c := range []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 7", 7, 0},
		{"exit 0", 0, 0},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"kill -KILL $$", -1, syscall.SIGKILL},
	} {
		_, done := startPane(t, h, c.script, map[string]string{})
		err := <-done
		done <- err
		var ee *exec.ExitError
		switch {
		case c.sig != 0:
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != c.sig {
				t.Errorf("harness %q: pane process ended %v, want killed by %v", c.script, err, c.sig)
			}
		case c.code == 0:
			if err != nil {
				t.Errorf("harness %q: pane process ended %v, want exit 0", c.script, err)
			}
		default:
			if !errors.As(err, &ee) || ee.ExitCode() != c.code {
				t.Errorf("harness %q: pane process ended %v, want exit %d", c.script, err, c.code)
			}
		}
	}
}

// TestKillingThePaneProcessEndsTheHarness: SIGKILL to the pane pid (the driver's
// KillGroup, recover, a person) cannot be forwarded; the harness dies anyway
// (PR_SET_PDEATHSIG) instead of running on in a pane tmux calls dead.
func TestKillingThePaneProcessEndsTheHarness(t *testing.T) {
	h := seattest.New(t, "x")
	pidFile := filepath.Join(h.Work, "harness.pid")
	pane, done := startPane(t, h, fmt.Sprintf("echo $$ >%s.tmp; mv %s.tmp %s; exec sleep 600", pidFile, pidFile, pidFile), map[string]string{})
	h.WaitFor("the harness to start", time.Minute, func() bool {
		_, err := os.Stat(pidFile)
		return err == nil
	})
	harness := readPID(t, pidFile)
	if got, err := seat.HarnessPID(pane.Process.Pid); err != nil || got != harness {
		t.Fatalf("HarnessPID(pane) = %d, %v; want the harness %d", got, err, harness)
	}
	pane.Process.Signal(syscall.SIGKILL)
	done <- <-done
	h.WaitFor("the harness to die with its pane process", time.Minute, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", harness))
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		// Orphaned to a parent that does not reap here (DESIGN §10): dead is a zombie.
		_, err = seat.ProcStart(harness)
		return err != nil
	})
}
