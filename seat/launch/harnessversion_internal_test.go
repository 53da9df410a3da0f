package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestInstalledVersionIsAskedOncePerBinary: the binary is asked only when its
// size or modification time changed, and one that does not answer is cut off
// and remembered as such (a start or a sweep never waits on it twice).
func TestInstalledVersionIsAskedOncePerBinary(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	count := filepath.Join(dir, "asked")
	bin := filepath.Join(dir, "harness")
	write := func(body string) {
		if err := tmuxtest.WriteExecutable(bin, []byte("#!/bin/sh\necho x >> "+count+"\n"+body)); err != nil {
			t.Fatal(err)
		}
	}
	asked := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	write("echo '2.1.328 (Claude Code)'\necho second line\n")
	for range 3 {
		said, err := InstalledVersion(home, bin)
		if err != nil || said != "2.1.328 (Claude Code)" {
			t.Fatalf("InstalledVersion = %q, %v", said, err)
		}
	}
	if n := asked(); n != 1 {
		t.Fatalf("asked %d times for an unchanged binary, want 1", n)
	}
	write("echo '2.2.0 (Claude Code)'\n") // an upgrade in place: another size
	if said, err := InstalledVersion(home, bin); err != nil || said != "2.2.0 (Claude Code)" || asked() != 2 {
		t.Fatalf("after the upgrade: %q, %v, asked %d times", said, err, asked())
	}

	versionAskLimit = 300 * time.Millisecond
	defer func() { versionAskLimit = 5 * time.Second }()
	write("exec sleep 30\n")
	if _, err := InstalledVersion(home, bin); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("a binary that hangs: %v", err)
	}
	// A binary that did not answer in time is asked again next time (a
	// start under load must not make its version unknown for good).
	if _, err := InstalledVersion(home, bin); err == nil || asked() != 4 {
		t.Fatalf("the hang was remembered: %v, asked %d times, want 4", err, asked())
	}
}
