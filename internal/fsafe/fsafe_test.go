package fsafe_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pantty/pantty/internal/fsafe"
)

func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := fsafe.ReadBounded(small, 5); err != nil || string(got) != "hello" {
		t.Fatalf("a file at its maximum: %q, %v", got, err)
	}
	var tl *fsafe.TooLargeError
	if _, err := fsafe.ReadBounded(small, 4); !errors.As(err, &tl) || tl.Size != 5 || tl.Max != 4 {
		t.Fatalf("a file over its maximum: %v", err)
	}

	// 2 GB, sparse: refused from its size, nothing read.
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := fsafe.ReadBounded(huge, 1<<20); !errors.As(err, &tl) || !strings.Contains(err.Error(), "2147483648 bytes") {
		t.Fatalf("a 2 GB file: %v", err)
	}

	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	if _, err := fsafe.ReadBounded(link, 100); !errors.Is(err, fsafe.ErrSymlink) {
		t.Fatalf("a symlink: %v", err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Without O_NONBLOCK this open would wait for a writer forever.
	if _, err := fsafe.ReadBounded(fifo, 100); !errors.Is(err, fsafe.ErrNotRegular) {
		t.Fatalf("a FIFO: %v", err)
	}
	if _, err := fsafe.ReadBounded(dir, 100); !errors.Is(err, fsafe.ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := fsafe.ReadBounded(filepath.Join(dir, "none"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "driver.log")
	for i := 0; i < 2; i++ {
		f, err := fsafe.OpenAppend(log, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("line\n")
		f.Close()
	}
	if got, _ := os.ReadFile(log); string(got) != "line\nline\n" {
		t.Fatalf("appends: %q", got)
	}

	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	link := filepath.Join(dir, "planted.log")
	os.Symlink(victim, link)
	if _, err := fsafe.OpenAppend(link, 0o600); !errors.Is(err, fsafe.ErrSymlink) {
		t.Fatalf("a symlink: %v", err)
	}
	dangling := filepath.Join(dir, "dangling.log")
	os.Symlink(filepath.Join(dir, "would-be-created"), dangling)
	if _, err := fsafe.OpenAppend(dangling, 0o600); !errors.Is(err, fsafe.ErrSymlink) {
		t.Fatalf("a dangling symlink: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "would-be-created")); !os.IsNotExist(err) {
		t.Fatal("a dangling symlink's target was created")
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Fatalf("the link's target changed: %q", got)
	}

	fifo := filepath.Join(dir, "fifo.log")
	syscall.Mkfifo(fifo, 0o600)
	if _, err := fsafe.OpenAppend(fifo, 0o600); !errors.Is(err, fsafe.ErrNotRegular) {
		t.Fatalf("a FIFO: %v", err)
	}
}

func TestReadTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	os.WriteFile(p, []byte("one\ntwo\nthree\n"), 0o600)
	if got, err := fsafe.ReadTail(p, 6); err != nil || string(got) != "three\n" {
		t.Fatalf("tail 6: %q %v", got, err)
	}
	if got, err := fsafe.ReadTail(p, 1000); err != nil || string(got) != "one\ntwo\nthree\n" {
		t.Fatalf("tail past the start: %q %v", got, err)
	}
}

func TestReadDirOfAMissingDirectoryIsEmpty(t *testing.T) {
	dir := t.TempDir()
	if ents, err := fsafe.ReadDir(filepath.Join(dir, "not-yet")); err != nil || len(ents) != 0 {
		t.Errorf("missing directory: %v, %v; want empty, no error", ents, err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := fsafe.ReadDir(file); err == nil {
		t.Error("a file listed as a directory: no error")
	}
}
