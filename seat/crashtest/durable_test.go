//go:build linux && amd64

package crashtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A power cut loses whatever the kernel had not written to the medium. What
// survives is decided by the order of the fsyncs against the rename or link
// that publishes a file, which ptrace shows exactly: a file is durable when
// the temp file's fsync returned before the rename/link that names it, and
// that name is durable when an fsync of its directory returned after the
// rename/link. These tests check that order on the real writers (a kill test
// cannot show it: a killed process leaves the page cache intact).

// fsEvent is one step of the order: a rename/link (entry), an fsync that
// returned (exit), or a write to stdout (entry).
type fsEvent struct {
	kind string // "publish", "fsynced", "stdout"
	from string // publish: the temp file
	path string // publish: the target; fsynced: the file or directory
}

// durabilityOrder checks, for every rename/link in events, that the source was
// fsynced before it and the target's directory after it, before limit (the
// index of the first stdout write, or len(events)). It returns the problems.
func durabilityOrder(events []fsEvent, limit int) []string {
	var bad []string
	published := 0
	for i, e := range events[:limit] {
		if e.kind != "publish" {
			continue
		}
		published++
		synced := false
		for _, b := range events[:i] {
			synced = synced || b.kind == "fsynced" && b.path == e.from
		}
		if !synced {
			bad = append(bad, fmt.Sprintf("%s was published as %s before it was fsynced", e.from, e.path))
		}
		dirSynced := false
		for _, a := range events[i+1 : limit] {
			dirSynced = dirSynced || a.kind == "fsynced" && a.path == filepath.Dir(e.path)
		}
		if !dirSynced {
			bad = append(bad, fmt.Sprintf("the directory of %s was not fsynced after it was published (before the answer)", e.path))
		}
	}
	if published == 0 {
		bad = append(bad, "no rename or link was seen")
	}
	return bad
}

// traceFS runs cmd under the tracer (every thread) and records the
// durability-relevant steps in the order the kernel ran them.
func traceFS(t *testing.T, cmd *exec.Cmd) (events []fsEvent, firstStdout int) {
	t.Helper()
	pending := map[int]string{} // tid → the file of an fsync in progress
	firstStdout = -1
	ws, err := trace(cmd, func(pid int, s stop) bool {
		switch {
		case s.Entry && (s.Nr == sysFsync || s.Nr == sysFdatasync):
			pending[s.TID] = fdPath(pid, s.Args[0])
		case !s.Entry && (s.Nr == sysFsync || s.Nr == sysFdatasync):
			if s.Ret == 0 {
				events = append(events, fsEvent{kind: "fsynced", path: pending[s.TID]})
			}
		case s.Entry && (s.Nr == sysRenameat || s.Nr == sysRenameat2 || s.Nr == sysLinkat):
			events = append(events, fsEvent{kind: "publish", from: atPath(pid, s.Args[0], peekString(s.TID, s.Args[1])),
				path: atPath(pid, s.Args[2], peekString(s.TID, s.Args[3]))})
		case s.Entry && (s.Nr == sysRename || s.Nr == sysLink):
			events = append(events, fsEvent{kind: "publish", from: atPath(pid, atFDCWD, peekString(s.TID, s.Args[0])),
				path: atPath(pid, atFDCWD, peekString(s.TID, s.Args[1]))})
		case s.Entry && s.Nr == sysWrite && int32(s.Args[0]) == 1:
			if firstStdout < 0 {
				firstStdout = len(events)
			}
			events = append(events, fsEvent{kind: "stdout"})
		}
		return false
	})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("traced command: %v", ws)
	}
	return events, firstStdout
}

// TestSendIsDurableBeforeItAnswers traces the real `pantty seat send`: the
// message's temp file is fsynced before it is linked into inbox/msgs, and the
// inbox/msgs directory is fsynced after the link — both before send prints the
// id (its answer) — so a message send acknowledged survives a power cut.
func TestSendIsDurableBeforeItAnswers(t *testing.T) {
	bin := seattest.Binary(t)
	dir := t.TempDir() // a real disk, not tmpfs: the fsyncs are real here
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	s, _ := state.Open(home, "inbox")
	if err := seat.InitConfig(s, "sim", work, nil); err != nil {
		t.Fatal(err)
	}
	in, err := os.CreateTemp(dir, "stdin")
	if err != nil {
		t.Fatal(err)
	}
	in.WriteString("a message that must survive a power cut\n")
	in.Seek(0, 0)
	out, _ := os.CreateTemp(dir, "stdout")
	cmd := exec.Command(bin, "seat", "send", "inbox", "--id", "durable-1")
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, out
	events, answer := traceFS(t, cmd)
	if answer < 0 {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("send never wrote its answer: %s", b)
	}
	var link *fsEvent
	for i := range events[:answer] {
		if events[i].kind == "publish" && strings.HasSuffix(events[i].path, "/inbox/msgs/durable-1.json") {
			link = &events[i]
		}
	}
	if link == nil {
		t.Fatalf("no link into inbox/msgs before the answer: %+v", events)
	}
	if bad := durabilityOrder(events, answer); len(bad) > 0 {
		t.Fatalf("not durable before the answer:\n  %s\nsteps: %+v", strings.Join(bad, "\n  "), events)
	}
	t.Logf("send: fsync(%s) → link → fsync(%s) → answer", shortPath(link.from, dir), shortPath(filepath.Dir(link.path), dir))
	if _, err := s.ReadStored("durable-1"); err != nil {
		t.Fatal(err)
	}
}

func shortPath(p, root string) string { return strings.TrimPrefix(p, root+"/") }

// TestEveryWriterFsyncsAroundThePublish checks the same order on every state
// file writer of writers_test.go (run as a traced child on a real disk): the
// temp file is fsynced before the rename or link, its directory after it.
func TestEveryWriterFsyncsAroundThePublish(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			seatWithOld(t, home, w)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), childEnv+"="+w.name, homeEnv+"="+home)
			events, _ := traceFS(t, cmd)
			if bad := durabilityOrder(events, len(events)); len(bad) > 0 {
				t.Fatalf("%s", strings.Join(bad, "\n"))
			}
		})
	}
}

// The order check's own control: it catches a publish before the fsync of the
// file, and a missing fsync of the directory.
func TestDurabilityOrderCatchesAMissingFsync(t *testing.T) {
	good := []fsEvent{{kind: "fsynced", path: "/s/tmp/.w-1"}, {kind: "publish", from: "/s/tmp/.w-1", path: "/s/a.toml"}, {kind: "fsynced", path: "/s"}}
	if bad := durabilityOrder(good, len(good)); len(bad) != 0 {
		t.Fatalf("a good order flagged: %v", bad)
	}
	for name, evs := range map[string][]fsEvent{
		"file not fsynced":   {{kind: "publish", from: "/s/tmp/.w-1", path: "/s/a.toml"}, {kind: "fsynced", path: "/s"}},
		"fsync after rename": {{kind: "publish", from: "/s/tmp/.w-1", path: "/s/a.toml"}, {kind: "fsynced", path: "/s/tmp/.w-1"}, {kind: "fsynced", path: "/s"}},
		"dir not fsynced":    {{kind: "fsynced", path: "/s/tmp/.w-1"}, {kind: "publish", from: "/s/tmp/.w-1", path: "/s/a.toml"}},
		"dir after answer":   {{kind: "fsynced", path: "/s/tmp/.w-1"}, {kind: "publish", from: "/s/tmp/.w-1", path: "/s/a.toml"}, {kind: "stdout"}, {kind: "fsynced", path: "/s"}},
	} {
		limit := len(evs)
		for i, e := range evs {
			if e.kind == "stdout" {
				limit = i
			}
		}
		if bad := durabilityOrder(evs, limit); len(bad) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}
