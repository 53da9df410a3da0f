package tmuxtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
)

func TestMain(m *testing.M) { os.Exit(LeakCheck(m)) }

func TestRootAndDir(t *testing.T) {
	r := Root()
	if r != Root() || !strings.Contains(filepath.Base(r), "ptt-") {
		t.Fatalf("Root() = %q, want a stable ptt-<pid> directory", r)
	}
	d := Dir(t)
	if filepath.Dir(d) != r {
		t.Fatalf("Dir %q not directly under Root %q", d, r)
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		t.Fatalf("Dir not created: %v", err)
	}
}

// TestServerCleanup checks that Server's cleanup kills the server it
// handed out, and waits for it.
func TestServerCleanup(t *testing.T) {
	var c *tmux.Client
	var pid int
	t.Run("inner", func(t *testing.T) {
		c = Server(t)
		if len(c.Socket) > tmux.MaxSocketPath || !strings.HasPrefix(c.Socket, Root()+"/") {
			t.Fatalf("socket %q", c.Socket)
		}
		if _, err := c.NewSession(context.Background(), tmux.NewSessionOpts{Name: "x", Argv: []string{"sleep", "60"}}); err != nil {
			t.Fatal(err)
		}
		if pid = serverPID(c); pid == 0 {
			t.Fatal("serverPID did not find the running server")
		}
	})
	if alive(pid) {
		t.Errorf("server %d still alive after the test's cleanup", pid)
	}
	if _, err := c.ListPanes(context.Background()); !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("ListPanes after cleanup: %v, want ErrNoServer", err)
	}
}

// TestFindByCmdline checks the scan LeakCheck relies on.
func TestFindByCmdline(t *testing.T) {
	marker := filepath.Join(Dir(t), "marker")
	cmd := exec.Command("sh", "-c", "sleep 30; :", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	found := false
	deadline := time.Now().Add(2 * time.Second)
	for !found && time.Now().Before(deadline) {
		for _, p := range findByCmdline(Root() + "/") {
			found = found || p.pid == cmd.Process.Pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !found {
		t.Fatalf("process %d mentioning %s not found", cmd.Process.Pid, marker)
	}
}
