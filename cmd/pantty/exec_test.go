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

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// startPane runs `pantty __exec` on a launch record whose harness is sh -c
// script (with PATH, HOME and env), as tmux would, records its pid in the
// seat's session.toml, as the driver does, and returns it with a channel that
// gets its end. The script gets one line on stdin once the pid is recorded: a
// script that acts as the seat reads it first (`read _`), because a pane is a
// seat's only once its driver has recorded it.
func startPane(t *testing.T, h *seattest.Harness, script string, env map[string]string) (*exec.Cmd, chan error) {
	t.Helper()
	a := h.Seat()
	env["PATH"], env["HOME"] = os.Getenv("PATH"), os.Getenv("HOME")
	if err := a.LaunchFile().Write(state.LaunchFile{Argv: []string{"/bin/sh", "-c", script}, Dir: h.Work, Env: env}); err != nil {
		t.Fatal(err)
	}
	pane := exec.Command(h.Bin, "__exec", a.LaunchPath())
	pane.Env = h.Env()
	stdin, err := pane.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pane.Start(); err != nil {
		t.Fatal(err)
	}
	if err := a.SessionFile().Write(state.Session{Harness: "sim", PanePID: pane.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("recorded\n"))
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
	t.Parallel()
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

// TestKillingThePaneProcessEndsTheHarness: SIGKILL to the pane pid cannot be
// forwarded; the harness dies anyway (PR_SET_PDEATHSIG) instead of running on in
// a pane tmux calls dead. proc.KillGroup (stop, recover) also ends a process the
// harness detached into its own session, which the group kill alone would miss.
func TestKillingThePaneProcessEndsTheHarness(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "x")
	for _, how := range []string{"SIGKILL to the pane pid", "proc.KillGroup"} {
		pane, done, harness, detached := startTree(t, h,
			"setsid -f sh -c 'echo $$ >%[2]s.tmp; mv %[2]s.tmp %[2]s; exec sleep 600' </dev/null >/dev/null 2>&1; "+
				"echo $$ >%[1]s.tmp; mv %[1]s.tmp %[1]s; exec sleep 600")
		if got, err := proc.HarnessPID(pane.Process.Pid); err != nil || got != harness {
			t.Fatalf("HarnessPID(pane) = %d, %v; want the harness %d", got, err, harness)
		}
		if how == "proc.KillGroup" {
			proc.KillGroup(pane.Process.Pid)
		} else {
			pane.Process.Signal(syscall.SIGKILL)
		}
		done <- <-done
		h.WaitFor("the harness to die with its pane process ("+how+")", time.Minute, func() bool { return gone(harness) })
		if how == "proc.KillGroup" {
			h.WaitFor("the detached child to die with its pane process", time.Minute, func() bool { return gone(detached) })
		} else {
			syscall.Kill(detached, syscall.SIGKILL) // escaped with the pane process (docs/intake.md)
		}
	}
}

// startTree starts a pane process running the shell script shape (a format
// whose %[1]s is where the harness writes its pid and %[2]s where the helper
// it detached with setsid writes its own) and waits for both pids.
func startTree(t *testing.T, h *seattest.Harness, shape string) (pane *exec.Cmd, done chan error, harness, detached int) {
	t.Helper()
	pidFile := filepath.Join(h.Work, "harness.pid")
	detFile := filepath.Join(h.Work, "detached.pid")
	os.Remove(pidFile)
	os.Remove(detFile)
	pane, done = startPane(t, h, fmt.Sprintf(shape, pidFile, detFile), map[string]string{})
	h.WaitFor("the harness and its detached child to start", time.Minute, func() bool {
		_, err1 := os.Stat(pidFile)
		_, err2 := os.Stat(detFile)
		return err1 == nil && err2 == nil
	})
	return pane, done, readPID(t, pidFile), readPID(t, detFile)
}

// gone reports whether pid has ended: no such process, or a zombie (orphans are
// reparented to a pid 1 that does not reap in this container: an exited
// detached process stayed a zombie, measured 2026-12-03).
func gone(pid int) bool {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	_, err := procid.Start(pid)
	return err != nil
}

// TestHangupEndsThePaneProcessTree: a pane process whose terminal hung up
// (SIGHUP: its tmux server died) or that a supervisor ends (SIGTERM) ends its
// whole tree, even when the harness and a helper it detached with setsid
// ignore both signals (as Gemini CLI 0.61.0's outer node does): the rest get
// SIGTERM and, proc.LaunchGrace later, SIGKILL; then the pane process exits.
func TestHangupEndsThePaneProcessTree(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "x")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		pane, done, harness, detached := startTree(t, h,
			"trap '' HUP TERM; setsid -f sh -c 'trap \"\" HUP TERM; echo $$ >%[2]s.tmp; mv %[2]s.tmp %[2]s; while :; do sleep 1; done' </dev/null >/dev/null 2>&1; "+
				"echo $$ >%[1]s.tmp; mv %[1]s.tmp %[1]s; while :; do sleep 1; done")
		sent := time.Now()
		pane.Process.Signal(sig)
		select {
		case err := <-done:
			done <- err
		case <-time.After(10 * proc.LaunchGrace):
			t.Fatalf("%v: the pane process still runs %s later (its harness ignores the signal)", sig, 10*proc.LaunchGrace)
		}
		t.Logf("%v: pane process ended in %s", sig, time.Since(sent).Round(time.Millisecond))
		if !gone(harness) || !gone(detached) {
			t.Fatalf("%v: the pane process ended but its harness (%d, gone %v) or detached helper (%d, gone %v) runs on",
				sig, harness, gone(harness), detached, gone(detached))
		}
	}
}
