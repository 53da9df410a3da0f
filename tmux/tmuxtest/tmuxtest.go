// Package tmuxtest gives tests a private, disposable tmux server and a way
// to prove nothing was left running afterwards.
//
// Tests that drive tmux must never touch the user's own server, and a
// leaked tmux server (or a simulated harness it was running) outlives the
// test binary silently. So everything a test process creates lives under
// one short per-process directory, Root(); Server hands out clients on
// sockets under it, and LeakCheck, used from TestMain, fails the package if
// any process still mentions Root() on its command line when the tests end.
package tmuxtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"golang.org/x/sys/unix"
)

// maxRootLen keeps Root short so that socket paths under it stay far below
// the 107-byte Unix socket limit even when TMPDIR is long.
const maxRootLen = 48

var (
	rootOnce sync.Once
	rootDir  string
)

// Root returns this test process's private prefix directory, e.g.
// /tmp/ptt-<pid>, creating it on first use. It lives under os.TempDir()
// unless that is so long that socket paths could overflow, in which case
// /tmp is used. Any stale directory of the same name (from a dead process
// that had our pid) is removed first.
func Root() string {
	rootOnce.Do(func() {
		base := os.TempDir()
		name := fmt.Sprintf("ptt-%d", os.Getpid())
		if len(base)+1+len(name) > maxRootLen {
			base = "/tmp"
		}
		rootDir = filepath.Join(base, name)
		_ = os.RemoveAll(rootDir)
		if err := os.MkdirAll(rootDir, 0o700); err != nil {
			panic(fmt.Sprintf("tmuxtest: creating %s: %v", rootDir, err))
		}
	})
	return rootDir
}

// Dir returns a fresh, short directory under Root(), removed when the test
// ends.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp(Root(), "t")
	if err != nil {
		t.Fatalf("tmuxtest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// Server returns a client for a private tmux server on a fresh socket
// under Root(). No server runs until the test creates a session. At cleanup
// the server on that socket, and only that one, is killed and waited for;
// "no server" is fine.
func Server(t testing.TB) *tmux.Client {
	t.Helper()
	sock := filepath.Join(Dir(t), "S")
	if len(sock) > tmux.MaxSocketPath {
		t.Fatalf("tmuxtest: socket path too long: %s", sock)
	}
	c := tmux.New(sock)
	// Registered after Dir's cleanup, so it runs first (cleanups are LIFO).
	t.Cleanup(func() { stopServer(t, c) })
	return c
}

// stopServer kills the server behind c and waits for its process to go, so
// that LeakCheck does not race a server that is merely still exiting.
func stopServer(t testing.TB, c *tmux.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pid := serverPID(c)
	err := c.KillServer(ctx)
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("tmuxtest: kill-server: %v", err)
	}
	if pid > 0 {
		waitGone(pid, 3*time.Second)
	}
}

// serverPID finds the server for c's socket without asking it: the
// process whose argv has "-S <socket>" (the server keeps the argv of the
// client that started it) and that leads its own session (tmux
// daemonizes; our short-lived clients do not). 0 if there is none.
func serverPID(c *tmux.Client) int {
	for _, p := range findByCmdline("-S\x00" + c.Socket + "\x00") {
		if sid, err := unix.Getsid(p.pid); err == nil && sid == p.pid {
			return p.pid
		}
	}
	return 0
}

// waitGone polls until pid no longer exists (or is a zombie) or d passes.
func waitGone(pid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the ")" closing the command name.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// Running lists the command lines of live processes (other than this one)
// that mention needle: what a test's run left behind, looked at the moment
// it should be gone rather than at the package's end.
func Running(needle string) []string {
	var out []string
	for _, p := range findByCmdline(needle) {
		out = append(out, fmt.Sprintf("pid %d: %s", p.pid, p.cmdline))
	}
	return out
}

// proc is one process found by findByCmdline.
type proc struct {
	pid     int
	cmdline string
}

// findByCmdline lists live processes other than this one whose command
// line contains needle.
func findByCmdline(needle string) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := string(bytes.TrimRight(bytes.ReplaceAll(b, []byte{0}, []byte{' '}), " "))
		if bytes.Contains(b, []byte(needle)) && alive(pid) {
			out = append(out, proc{pid: pid, cmdline: cmd})
		}
	}
	return out
}

// LeakCheck runs the tests, then looks for any process still running whose
// command line mentions Root() (tmux servers, pantty drivers, simulated
// harnesses started with paths under it). Processes that are merely exiting
// get a short grace period; whatever remains is printed, SIGKILLed, and
// makes the package fail. Root() is removed at the end. Use it as
//
//	func TestMain(m *testing.M) { os.Exit(tmuxtest.LeakCheck(m)) }
func LeakCheck(m *testing.M) int {
	root := Root()
	code := m.Run()
	needle := root + "/"
	leaks := findByCmdline(needle)
	deadline := time.Now().Add(2 * time.Second)
	for len(leaks) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		leaks = findByCmdline(needle)
	}
	if len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "tmuxtest: %d process(es) left running under %s:\n", len(leaks), root)
		for _, p := range leaks {
			fmt.Fprintf(os.Stderr, "  pid %d: %s\n", p.pid, p.cmdline)
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		if code == 0 {
			code = 1
		}
	}
	_ = os.RemoveAll(root)
	return code
}

// WaitBoundParallel raises the number of tests run at once to n unless the
// go test command line set -parallel. It is for TestMain of packages whose
// tests wait on tmux, timers and the simulator rather than compute (the seat
// package: 7 s of CPU in 140 s of wall time serially), where the default of
// one test per core leaves the machine idle. Packages that run the real
// harnesses (node processes that do compute) keep the default.
func WaitBoundParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// WriteExecutable writes a program file for a test to run. Parallel tests
// fork all the time, and a child forked while this file is open for writing
// holds that descriptor until it execs; exec'ing the file then fails with
// "text file busy" (ETXTBSY). Holding syscall.ForkLock for the write — the
// lock os/exec takes around every fork — leaves no such window.
func WriteExecutable(path string, data []byte) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return os.WriteFile(path, data, 0o700)
}
