package tmux_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if any tmux server or pane program started by
// these tests is still running afterwards.
func TestMain(m *testing.M) { os.Exit(tmuxtest.LeakCheck(m)) }

// ctxFor returns a context bounding one test's tmux work.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 10ms until it reports true, failing the test
// with what if d passes first. It is the only place tests poll.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", d, what, lastErr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits for path to exist and returns its content. Tests write
// result files atomically (write tmp, then mv) so existence means complete.
func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	var b []byte
	waitFor(t, 5*time.Second, "file "+path, func() (bool, error) {
		var err error
		b, err = os.ReadFile(path)
		return err == nil, err
	})
	return b
}

// waitScreen waits until the pane's visible screen contains want.
func waitScreen(t *testing.T, c *tmux.Client, pane, want string) {
	t.Helper()
	waitFor(t, 5*time.Second, "screen of "+pane+" to show "+want, func() (bool, error) {
		s, err := c.Capture(context.Background(), pane)
		return strings.Contains(s, want), err
	})
}

// findPane returns the pane with id from ListPanes.
func findPane(t *testing.T, c *tmux.Client, id string) (tmux.Pane, bool) {
	t.Helper()
	panes, err := c.ListPanes(context.Background())
	if err != nil {
		t.Fatalf("ListPanes: %v", err)
	}
	for _, p := range panes {
		if p.ID == id {
			return p, true
		}
	}
	return tmux.Pane{}, false
}

// waitDead waits until pane id is dead with a known exit status and
// returns it. When tmux shows the pane dead but has not collected its
// status (a lost SIGCHLD, see Client.Reap) it nudges the server, as pantty
// must.
func waitDead(t *testing.T, c *tmux.Client, id string) tmux.Pane {
	t.Helper()
	var p tmux.Pane
	waitFor(t, 5*time.Second, "pane "+id+" to be dead with a known status", func() (bool, error) {
		got, ok := findPane(t, c, id)
		p = got
		if ok && got.StatusPending() {
			t.Logf("pane %s dead with status pending: sending SIGCHLD to the server", id)
			return false, c.Reap(context.Background())
		}
		return ok && got.Dead, nil
	})
	return p
}

// newSession creates a session or fails the test.
func newSession(t *testing.T, c *tmux.Client, o tmux.NewSessionOpts) tmux.Pane {
	t.Helper()
	p, err := c.NewSession(ctxFor(t), o)
	if err != nil {
		t.Fatalf("NewSession(%s): %v", o.Name, err)
	}
	return p
}

// rawTmux runs tmux directly on c's socket, to check state through a path
// independent of the code under test.
func rawTmux(t *testing.T, c *tmux.Client, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-f", "/dev/null", "-S", c.Socket}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// alive reports whether a process exists (zombies count as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// mustKind fails unless err matches kind.
func mustKind(t *testing.T, err, kind error, what string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, kind)
	}
}
