package handoff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func store(t *testing.T) Store {
	dir := filepath.Join(t.TempDir(), "handoff")
	return Store{Dir: dir, Write: func(p string, b []byte) error { return os.WriteFile(p, b, 0o600) }}
}

func TestMaterializeNumbersAndDetectsChange(t *testing.T) {
	s := store(t)
	n := Note{Seat: "a", Session: "s1", Generation: 1, Cursor: "m1", Pending: []string{"m2"}, At: time.Unix(100, 0)}
	r1, err := s.Materialize(n)
	if err != nil || !r1.Changed || r1.Number != 1 {
		t.Fatalf("first: %+v %v", r1, err)
	}
	n.At = time.Unix(200, 0) // only the volatile field moves
	r2, err := s.Materialize(n)
	if err != nil || r2.Changed || r2.Number != 2 || r2.Hash != r1.Hash {
		t.Fatalf("same knowledge later must not count as changed: %+v %v", r2, err)
	}
	n.Cursor = "m2"
	r3, _ := s.Materialize(n)
	if !r3.Changed || r3.Hash == r1.Hash {
		t.Fatalf("a new cursor must change the note: %+v", r3)
	}
	cur, err := s.Current()
	if err != nil || !strings.Contains(cur, "Cursor: m2") {
		t.Fatalf("current: %q %v", cur, err)
	}
	if fi, _ := os.Lstat(s.CurrentPath()); !fi.Mode().IsRegular() {
		t.Fatal("current must be a regular file")
	}
	hist, _ := s.History()
	if len(hist) != 3 || hist[2] != 3 {
		t.Fatalf("history %v", hist)
	}
}

func TestNotesAreKeptInOrderAndChangeTheHandoff(t *testing.T) {
	s := store(t)
	base := Note{Seat: "a", Session: "s"}
	r1, _ := s.Materialize(base)
	if _, err := s.AddNote("step 1: run the linter first", time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddNote("step 2: then the tests", time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	text, newest, err := s.Notes()
	if err != nil || newest != time.Unix(2, 0) || strings.Index(text, "step 1") > strings.Index(text, "step 2") {
		t.Fatalf("notes %q newest %v err %v", text, newest, err)
	}
	base.Procedure = text
	r2, _ := s.Materialize(base)
	if !r2.Changed || r2.Hash == r1.Hash || !strings.Contains(r2.Text, "step 2: then the tests") {
		t.Fatalf("notes must reach the handoff: %+v", r2)
	}
	if _, err := s.AddNote("  \n", time.Unix(3, 0)); err == nil {
		t.Fatal("an empty note must be refused")
	}
	if _, err := s.AddNote(strings.Repeat("x", MaxNoteBytes+1), time.Unix(4, 0)); err == nil {
		t.Fatal("an oversize note must be refused")
	}
}

func TestCurrentRefusesASymlink(t *testing.T) {
	s := store(t)
	os.MkdirAll(s.Dir, 0o700)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("x"), 0o600)
	os.Symlink(target, s.CurrentPath())
	if _, err := s.Current(); err == nil {
		t.Fatal("a symlinked current must be refused")
	}
}
