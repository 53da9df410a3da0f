package statedir_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/statedir"
)

type record struct {
	Phase string    `toml:"phase"`
	Count int       `toml:"count"`
	At    time.Time `toml:"at"`
}

func read(path string) ([]byte, error) { return fsafe.ReadBounded(path, 1<<10) }

func bound(t *testing.T) statedir.File[record] {
	t.Helper()
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	return statedir.Bind[record](tmp, filepath.Join(dir, "rec.toml"), read)
}

// A record written is the record read back, in a private file, with nothing
// left in tmp/.
func TestWriteThenReadGivesTheRecord(t *testing.T) {
	f := bound(t)
	want := record{Phase: "idle", Count: 3, At: time.Date(2026, 12, 4, 13, 0, 0, 0, time.UTC)}
	if err := f.Write(want); err != nil {
		t.Fatal(err)
	}
	got, err := f.Read()
	if err != nil || got != want {
		t.Fatalf("read %+v, %v; want %+v", got, err, want)
	}
	fi, err := os.Stat(f.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v: want 0600", fi.Mode(), err)
	}
	if left, _ := os.ReadDir(filepath.Join(filepath.Dir(f.Path()), "tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// Missing is fs.ErrNotExist (a reader says "unknown"); an unknown key, a
// wrong type and an oversized file are errors that name the file.
func TestReadErrorsNameTheFile(t *testing.T) {
	f := bound(t)
	if _, err := f.Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	for _, c := range []struct{ name, body, want string }{
		{"unknown key", "phase = \"idle\"\nowner = 7\n", `line 2: unknown key "owner"`},
		{"wrong type", "count = \"three\"\n", "rec.toml"},
		{"over the limit", "phase = \"" + strings.Repeat("x", 2<<10) + "\"\n", "rec.toml"},
	} {
		if err := os.WriteFile(f.Path(), []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := f.Read()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%s: %v, want an error naming %s and %q", c.name, err, f.Path(), c.want)
		}
	}
}

// Checked refuses a record the decoder accepts but the type cannot mean.
func TestCheckedRefusesWhatTheRecordCannotMean(t *testing.T) {
	f := bound(t).Checked(func(path string, r record) error {
		if r.Count < 0 {
			return fmt.Errorf("%s: count %d is negative", path, r.Count)
		}
		return nil
	})
	if err := f.Write(record{Count: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(); err == nil || !strings.Contains(err.Error(), "count -1 is negative") {
		t.Fatalf("read %v, want the check's error", err)
	}
	if err := f.Write(record{Count: 1}); err != nil {
		t.Fatal(err)
	}
	if r, err := f.Read(); err != nil || r.Count != 1 {
		t.Fatalf("read %+v, %v", r, err)
	}
}
