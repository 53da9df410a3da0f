package seat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/natefinch/atomic"
)

// FileMode and DirMode keep every state file private: seat.toml may carry
// credentials in its env table and the inbox carries board text.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// WriteFile is the one way pantty writes a state file: it refuses a symlink at the
// target (a planted link must not redirect a write), writes a temp file in tmpDir
// (never beside the target, where a directory watcher would see it), fsyncs it,
// renames it over the target and fsyncs the directory, so a reader sees either the
// old content or the new, never a torn file, and the rename survives a power cut.
func WriteFile(tmpDir, path string, data []byte) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("write %s: refusing to write through a symlink", path)
	} else if err == nil && fi.IsDir() {
		return fmt.Errorf("write %s: a directory is in the way", path)
	}
	tmp, err := writeTemp(tmpDir, data)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// natefinch/atomic does the rename (and its portable fallbacks); the temp file
	// placement and both fsyncs are pantty's.
	if err := atomic.ReplaceFile(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a fresh private file in dir and fsyncs it.
func writeTemp(dir string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".w-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Chmod(FileMode); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// LinkNew stores data at path only if nothing is there yet: a temp file is
// written and fsynced in tmpDir, then hard-linked into place, which fails with
// fs.ErrExist instead of replacing. Two concurrent writers of one path therefore
// store exactly one copy.
func LinkNew(tmpDir, path string, data []byte) error {
	tmp, err := writeTemp(tmpDir, data)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory so a rename or link in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// WriteState encodes v as TOML and writes it with WriteFile.
func WriteState(tmpDir, path string, v any) error {
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(tmpDir, path, buf.Bytes())
}

// ReadState decodes a TOML state file strictly into v: a key v does not know is an
// error naming the file and line, a type error names the line, and a missing file
// is returned as fs.ErrNotExist (wrapped) so the caller can say "unknown".
func ReadState(path string, v any) error {
	data, err := readRegular(path)
	if err != nil {
		return err
	}
	return DecodeStrict(path, data, v)
}

// readRegular reads a file, refusing symlinks and directories with a clear error.
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("read %s: is a symlink (refused)", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// DecodeStrict decodes TOML source into v and turns the library's findings into
// errors a person can act on: BurntSushi/toml gives positions only for syntax and
// type errors, so an unknown key's line is found by looking for it in the source.
func DecodeStrict(path string, data []byte, v any) error {
	md, err := toml.Decode(string(data), v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s: line %d: %s", path, pe.Position.Line, oneLine(pe.Message))
		}
		return fmt.Errorf("%s: %s", path, oneLine(err.Error()))
	}
	if und := md.Undecoded(); len(und) > 0 {
		key := und[0].String()
		if line := findKeyLine(data, und[0]); line > 0 {
			return fmt.Errorf("%s: line %d: unknown key %q", path, line, key)
		}
		return fmt.Errorf("%s: unknown key %q", path, key)
	}
	return nil
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

var (
	tableRE = regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$`)
	keyRE   = regexp.MustCompile(`^\s*([A-Za-z0-9_.\-"' ]+?)\s*=`)
)

// findKeyLine returns the 1-based line on which key is defined, or 0.
func findKeyLine(data []byte, key toml.Key) int {
	want := strings.Join(key, ".")
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := tableRE.FindStringSubmatch(line); m != nil {
			table = normKey(m[1])
			if table == want {
				return n
			}
			continue
		}
		if m := keyRE.FindStringSubmatch(line); m != nil {
			k := normKey(m[1])
			if table != "" {
				k = table + "." + k
			}
			if k == want || strings.HasPrefix(want, k+".") {
				return n
			}
		}
	}
	return 0
}

func normKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}
