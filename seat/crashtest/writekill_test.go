//go:build linux && amd64

package crashtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/state"
)

// childRun is one traced run of the writer.
type childRun struct {
	killedBefore string   // the system call the writer was killed before ("" = not killed)
	steps        []string // the writer thread's system calls inside the write, in order
	status       string
}

// runWriter runs the writer of version 2 as a child of the tracer and kills it
// just before the kill-th system call its thread makes inside the write (a
// negative kill lets it finish, listing the steps).
func runWriter(t *testing.T, name, home string, kill int) childRun {
	t.Helper()
	out, err := os.CreateTemp(filepath.Dir(home), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+name, homeEnv+"="+home)
	cmd.Stdout, cmd.Stderr = out, out
	var run childRun
	writerTID, started, done, n := 0, false, false, 0
	ws, err := trace(cmd, func(pid int, s stop) bool {
		if !s.Entry {
			return false
		}
		if s.Nr == sysGetppid {
			if !started {
				started, writerTID = true, s.TID
			} else if s.TID == writerTID {
				done = true
			}
			return false
		}
		if !started || done || s.TID != writerTID || !(everyStep || changesFiles(s.Nr)) {
			return false
		}
		d := describe(pid, s)
		run.steps = append(run.steps, d)
		if n == kill {
			run.killedBefore = d
			return true
		}
		n++
		return false
	})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	run.status = fmt.Sprint(ws)
	if run.killedBefore == "" && (!ws.Exited() || ws.ExitStatus() != 0) {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("the writer failed on its own (%v): %s", ws, b)
	}
	return run
}

// everyStep kills before every system call of the writing thread (futex,
// fcntl, the runtime's own calls included), not only before those that touch
// the file system: PANTTY_CRASHTEST_EVERY=1, about four times the runs.
var everyStep = os.Getenv("PANTTY_CRASHTEST_EVERY") == "1"

// changesFiles reports the system calls that change the file system or its
// durability; a kill between two other calls leaves the same files as a kill
// before the next one of these.
func changesFiles(nr uint64) bool {
	switch nr {
	case 2, 257, // open, openat (may create)
		1, 18, 20, // write, pwrite64, writev
		3,      // close
		74, 75, // fsync, fdatasync
		82, 264, 316, // rename, renameat, renameat2
		86, 265, // link, linkat
		87, 263, // unlink, unlinkat
		83, 258, // mkdir, mkdirat
		90, 91, 268, // chmod, fchmod, fchmodat
		73,     // flock
		76, 77: // truncate, ftruncate
		return true
	}
	return false
}

// scratch is where the kill runs keep their state roots: tmpfs when there is
// one, so the fsyncs of thousands of writes cost nothing (a killed process
// leaves the page cache intact, so the medium does not change what a reader
// sees; the power-cut side is TestSendIsDurableBeforeItAnswers).
func scratch(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "pantty-crash-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// short strips the test's temporary root from a step, for the log.
func short(step, home string) string { return strings.ReplaceAll(step, home+"/", "") }

// TestKillBeforeEveryStepLeavesOldOrNew kills the writer of every state file
// before each system call of its write, one run per kill point, until a run
// finishes. After each kill a reader (pantty's own) sees the old content or the
// new one — for a file the write creates, nothing or the new one — never a
// torn or mixed file; no temp file is left beside the target; and the next
// write succeeds over whatever the kill left in tmp/.
func TestKillBeforeEveryStepLeavesOldOrNew(t *testing.T) {
	total := 0
	defer func() { t.Logf("%d writers, %d kill points in all", len(writers), total) }()
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			base := scratch(t)
			points, outcomes := 0, []string{}
			for kill := 0; ; kill++ {
				home := filepath.Join(base, fmt.Sprint(kill), "home")
				s := seatWithOld(t, home, w)
				run := runWriter(t, w.name, home, kill)
				v, err := w.read(s)
				if err != nil {
					t.Fatalf("killed before %q (step %d): the reader sees neither old nor new: %v", short(run.killedBefore, home), kill, err)
				}
				if run.killedBefore == "" {
					if v != 2 {
						t.Fatalf("the write finished but the reader sees version %d", v)
					}
					t.Logf("%d kill points; steps: %s", points, short(strings.Join(run.steps, " | "), home))
					t.Logf("outcomes: %s", strings.Join(outcomes, ", "))
					total += points
					return
				}
				if v == 0 && !w.create {
					t.Fatalf("killed before %q: the old file vanished", short(run.killedBefore, home))
				}
				points++
				outcomes = append(outcomes, fmt.Sprintf("%s→%s", firstWord(run.killedBefore), map[int]string{0: "absent", 1: "old", 2: "new"}[v]))
				assertNoStrayTemp(t, s)
				// Whatever the kill left in tmp/ never blocks the next write.
				if err := w.write(s, 2); err != nil {
					t.Fatalf("the write after a kill before %q failed: %v", short(run.killedBefore, home), err)
				}
				if v, err := w.read(s); err != nil || v != 2 {
					t.Fatalf("after the rewrite: version %d, %v", v, err)
				}
				if kill > 400 {
					t.Fatal("the write never finished")
				}
			}
		})
	}
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// assertNoStrayTemp: a temp file may only ever be left in the seat's (or the
// home's) tmp/, never beside a target where a watcher would take it for state.
func assertNoStrayTemp(t *testing.T, s state.Seat) {
	t.Helper()
	filepath.WalkDir(s.Home, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".w-") {
			t.Errorf("temp file beside a target: %s", p)
		}
		return nil
	})
}
