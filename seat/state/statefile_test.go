package state_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// stateDirs makes a state directory and its tmp/ the way a seat has them.
func stateDirs(t *testing.T) (dir, tmp string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "seat")
	if err := os.Mkdir(dir, fsatomic.DirMode); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "tmp")
}

func TestWriteFileRefusesSymlinkTarget(t *testing.T) {
	t.Parallel()
	dir, tmp := stateDirs(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "owner.toml")
	if err := os.Symlink(victim, target); err != nil {
		t.Fatal(err)
	}
	err := fsatomic.WriteFile(tmp, target, []byte("holder = \"h-planted\"\n"))
	if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), target) {
		t.Fatalf("want a refusal naming the symlink %s, got %v", target, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the write went through the symlink: %q", b)
	}
	if fi, err := os.Lstat(target); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	// Reading through a planted link is refused too.
	var o state.Owner
	if err := state.ReadState(target, &o); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("ReadState through a symlink: want a refusal, got %v", err)
	}
}

// TestEnsureRefusesASymlinkedStateDirectory: a directory inside a seat that is
// a symlink (here events/ and inbox/, aimed at a victim directory) is refused by
// Ensure, which every driver start runs, and nothing lands in the victim.
func TestEnsureRefusesASymlinkedStateDirectory(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"events", "inbox"} {
		s, err := state.Open(filepath.Join(t.TempDir(), "home"), "linked")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Ensure(); err != nil {
			t.Fatal(err)
		}
		victim := t.TempDir()
		if err := os.RemoveAll(filepath.Join(s.Dir, rel)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(s.Dir, rel)); err != nil {
			t.Fatal(err)
		}
		err = s.Ensure()
		if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), filepath.Join(s.Dir, rel)) {
			t.Errorf("%s/ as a symlink: want Ensure to refuse naming it, got %v", rel, err)
		}
		if _, err := seat.Acquire(s); err == nil {
			t.Errorf("%s/ as a symlink: a driver could take the seat", rel)
		}
		if ents, _ := os.ReadDir(victim); len(ents) != 0 {
			t.Errorf("%s/ as a symlink: %d entries appeared in the victim directory", rel, len(ents))
		}
	}
}

// A write is watched as it happens: the only name that ever appears in the
// target's directory is the target itself (a temp file beside it would be seen
// by the driver's watchers), and nothing is left in tmp/ afterwards.
func TestWriteFileLeavesNoTempFileBesideTargetOrInTmp(t *testing.T) {
	t.Parallel()
	dir, tmp := stateDirs(t)
	target := filepath.Join(dir, "cursor.toml")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := fsatomic.WriteFile(tmp, target, []byte("new\n")); err != nil {
			t.Fatal(err)
		}
	}
	// A sentinel written after the writes: once its event arrives, every event
	// of the writes has arrived (one watcher delivers in order).
	sentinel := filepath.Join(dir, "zz-sentinel")
	if err := os.WriteFile(sentinel, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	seen := map[string]bool{}
	for !seen[sentinel] {
		select {
		case ev := <-w.Events:
			seen[ev.Name] = true
		case err := <-w.Errors:
			t.Fatal(err)
		case <-deadline:
			t.Fatalf("no event for the sentinel; saw %v", seen)
		}
	}
	for name := range seen {
		if name != target && name != sentinel && name != tmp {
			t.Errorf("a write made %s appear beside the target", name)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "new\n" {
		t.Fatalf("target holds %q", b)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("temp files left in tmp/: %v", ents)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if n := e.Name(); n != "cursor.toml" && n != "tmp" && n != "zz-sentinel" {
			t.Errorf("left beside the target: %s", n)
		}
	}
}

func TestStateFilesArePrivate(t *testing.T) {
	t.Parallel()
	dir, tmp := stateDirs(t)
	target := filepath.Join(dir, "heartbeat.toml")
	// A file a person loosened is private again after pantty rewrites it.
	if err := os.WriteFile(target, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsatomic.WriteState(tmp, target, state.Heartbeat{Phase: state.PhaseIdle, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]fs.FileMode{target: fsatomic.FileMode, tmp: fsatomic.DirMode} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	// Every directory of a seat, and every file fsatomic.LinkNew stores, is private.
	s, err := state.Open(t.TempDir(), "private")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := fsatomic.LinkNew(s.TmpDir(), filepath.Join(s.MsgsDir(), "m.json"), []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	seattest.CheckPrivate(t, s.Dir)
}

func TestReadStateMissingIsNotExist(t *testing.T) {
	t.Parallel()
	dir, _ := stateDirs(t)
	var c inbox.Cursor
	err := state.ReadState(filepath.Join(dir, "cursor.toml"), &c)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("want fs.ErrNotExist, got %v", err)
	}
	s, _ := state.Open(dir, "never-started")
	if _, err := s.SessionFile().Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadSession of a seat never started: want fs.ErrNotExist, got %v", err)
	}
	if _, live, err := s.LiveOwner(); live || err != nil {
		t.Fatalf("LiveOwner with no owner.toml: live=%v err=%v", live, err)
	}
}

func TestReadStateCorruptNamesFileAndLine(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		text string
		line string
	}{
		"truncated string": {"harness = \"sim\"\nid = \"5b1c0b0e-7a", "line 2"},
		"truncated table":  {"harness = \"sim\"\n[tmu", "line 2"},
		"wrong type":       {"harness = \"sim\"\ngeneration = \"two\"\n", "line 2"},
		"unknown key":      {"harness = \"sim\"\nid = \"x\"\nsurprise = 1\n", "line 3"},
		"binary garbage":   {"\x00\x01\x02\xff", "line 1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir, _ := stateDirs(t)
			path := filepath.Join(dir, "session.toml")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			var v state.Session
			err := state.ReadState(path, &v)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("want a decode error, got %v", err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.line) {
				t.Fatalf("the error should name %s and %s: %v", path, c.line, err)
			}
			if b, _ := os.ReadFile(path); string(b) != c.text {
				t.Fatalf("reading changed the file: %q", b)
			}
		})
	}
}

// Tests run as root, for whom chmod 000 does not make a file unreadable: a
// directory where the file should be does.
func TestReadStateDirectoryInTheWay(t *testing.T) {
	t.Parallel()
	dir, tmp := stateDirs(t)
	path := filepath.Join(dir, "intent.toml")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	var in state.Intent
	err := state.ReadState(path, &in)
	if err == nil || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Fatalf("want an error naming %s that is not 'missing', got %v", path, err)
	}
	if err := fsatomic.WriteState(tmp, path, state.Intent{Want: state.IntentRunning}); err == nil {
		t.Fatalf("a write over a directory succeeded")
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Fatalf("the directory in the way was replaced: %v %v", fi, err)
	}
}

// fsatomic.LinkNew stores a path once: a second writer gets fs.ErrExist and the first
// content stays.
func TestLinkNewNeverReplaces(t *testing.T) {
	t.Parallel()
	dir, tmp := stateDirs(t)
	path := filepath.Join(dir, "m.json")
	if err := fsatomic.LinkNew(tmp, path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := fsatomic.LinkNew(tmp, path, []byte("second")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second LinkNew: want fs.ErrExist, got %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Fatalf("temp files left in tmp/: %v", ents)
	}
}

// TestJoinLinesSaysARepeatOnce: a harness that failed the same way at each
// launch is said once with its count, other lines as they are, in order.
func TestJoinLinesSaysARepeatOnce(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"boom", "boom", "boom"}, "boom (×3)"},
		{[]string{"x", "boom", "boom", "y", "boom"}, "x | boom (×2) | y | boom"},
	} {
		if got := state.JoinLines(c.in); got != c.want {
			t.Errorf("JoinLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
