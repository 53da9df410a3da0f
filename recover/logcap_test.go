package recover_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/seattest"
)

// cronRun runs one sweep the way the installed crontab line does: a bare
// environment and the scheduler's own append redirection.
func cronRun(t *testing.T, bin, home string) {
	t.Helper()
	log := filepath.Join(home, recover.LogName)
	cmd := exec.Command("/bin/sh", "-c", `"$1" recover >>"$2" 2>&1`, "sh", bin, log)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "PANTTY_HOME=" + home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("recover from cron: %v %s", err, out)
	}
}

func TestRecoverLogIsCappedAtTwoGenerations(t *testing.T) {
	bin := seattest.Binary(t)
	home := t.TempDir()
	log := filepath.Join(home, recover.LogName)
	old := bytes.Repeat([]byte("an old sweep's line\n"), recover.LogCap/20+1)
	if err := os.WriteFile(log, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log+".1", []byte("the generation before\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cronRun(t, bin, home)
	prev, err := os.ReadFile(log + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(prev, old) || !strings.Contains(string(prev[len(old):]), "recover "+home) {
		t.Fatalf("recover.log.1 should hold the full log and then the rotating run's report; its tail: %q", tail(prev))
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("the rotating run left a recover.log behind (%v): its output belongs to the old file", err)
	}

	cronRun(t, bin, home)
	fresh, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(fresh), "recover "+home) {
		t.Fatalf("the next run should start a fresh recover.log with its report, got %q", fresh)
	}
	if again, _ := os.ReadFile(log + ".1"); !bytes.Equal(again, prev) {
		t.Fatal("a log under the cap must not rotate")
	}
}

func TestPlantedRecoverLogSymlinkIsMovedAside(t *testing.T) {
	bin := seattest.Binary(t)
	home := t.TempDir()
	log := filepath.Join(home, recover.LogName)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, log); err != nil {
		t.Fatal(err)
	}

	// The shell's >> follows the link once, before pantty runs: that append
	// is the scheduler's, and the only one.
	cronRun(t, bin, home)
	got, _ := os.ReadFile(victim)
	if !strings.Contains(string(got), "not a regular file") {
		t.Fatalf("the run should say it moved the symlink aside; the file it wrote to holds %q", got)
	}
	if fi, err := os.Lstat(log + ".1"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink should be moved aside to recover.log.1: %v", err)
	}

	cronRun(t, bin, home)
	if fi, err := os.Lstat(log); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the next run should write a regular recover.log: %v", err)
	}
	if after, _ := os.ReadFile(victim); !bytes.Equal(after, got) {
		t.Fatal("the link's target was written again after the link was moved aside")
	}
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}
