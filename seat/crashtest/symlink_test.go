package crashtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/state"
)

// filesOf lists the regular files under dir, relative to it (tmp/ excluded).
func filesOf(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == "tmp" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out[rel] = true
		}
		return nil
	})
	return out
}

// TestEveryWriterRefusesASymlinkedTarget plants a symlink to a victim file
// where each state file goes, then runs pantty's writer for it: the write must
// fail (or, for a no-replace link, find the name taken), the victim must keep
// its content and the link must stay a link. Writers that create a fresh name
// on every write (events, notes) cannot be aimed at and are skipped.
func TestEveryWriterRefusesASymlinkedTarget(t *testing.T) {
	refused, skipped := 0, []string{}
	for _, w := range writers {
		// Find the file this writer writes: run it once and see what appeared.
		probe := filepath.Join(t.TempDir(), "home")
		ps, _ := state.Open(probe, "crash")
		if err := ps.Ensure(); err != nil {
			t.Fatal(err)
		}
		before := filesOf(t, probe)
		if err := w.write(ps, 1); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		var targets []string
		for f := range filesOf(t, probe) {
			if !before[f] && !strings.HasSuffix(f, ".lock") {
				targets = append(targets, f)
			}
		}
		sort.Strings(targets)
		if strings.Contains(w.name, "<ns>") {
			skipped = append(skipped, w.name)
			continue
		}
		for _, target := range targets {
			home := filepath.Join(t.TempDir(), "home")
			s := seatWithOld(t, home, w)
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(home, target)
			os.MkdirAll(filepath.Dir(path), 0o700)
			os.Remove(path)
			if err := os.Symlink(victim, path); err != nil {
				t.Fatal(err)
			}
			err := w.write(s, 2)
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("%s: the write went through the planted symlink %s (victim now %q, err %v)", w.name, target, b, err)
				continue
			}
			if fi, lerr := os.Lstat(path); lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s: the planted symlink %s was replaced (err %v)", w.name, target, err)
				continue
			}
			switch {
			case err != nil:
				refused++
			case len(targets) == 1 && !w.create:
				// (a writer of several files may not aim at this one: 0001.md
				// when the next note is 0002.md)
				t.Errorf("%s: writing over the symlink %s reported success", w.name, target)
			}
		}
	}
	t.Logf("%d symlinked targets refused across %d writers; skipped (a fresh name per write): %s", refused, len(writers)-len(skipped), strings.Join(skipped, ", "))
}
