// Package fsatomic is how pantty puts a file on disk so that a crash or a
// concurrent reader never sees half of it, and how it reads a TOML file back
// strictly: the atomic write (a private temp file, fsync, rename, fsync of the
// directory), the no-replace store (a hard link that fails instead of
// replacing), and the strict decode that names the file and line of what is
// wrong. It imports nothing of pantty; the seat's bounded reads
// (internal/fsafe, seat's limits table) sit on top of it.
package fsatomic

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

// DecodeStrict decodes TOML source into v and turns the library's findings into
// errors a person can act on: BurntSushi/toml gives positions only for syntax and
// type errors, so an unknown key's line is found by looking for it in the source.
func DecodeStrict(path string, data []byte, v any) error {
	md, err := toml.Decode(string(withoutCommentLines(data)), v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			msg := OneLine(pe.Message)
			// "Key 'command' has already been defined.": the library's words
			// for a key set twice (a sed that uncommented both of a
			// template's commented lines, say).
			if k, ok := strings.CutPrefix(msg, "Key '"); ok && strings.HasSuffix(k, "' has already been defined.") {
				msg = fmt.Sprintf("%s is set twice (here and above): keep one", strings.TrimSuffix(k, "' has already been defined."))
			}
			return fmt.Errorf("%s: line %d: %s", path, pe.Position.Line, msg)
		}
		return fmt.Errorf("%s: %s", path, OneLine(err.Error()))
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

// OneLine is the first line of s, trimmed: a library's multi-line message
// made fit for one line of an error.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// findKeyLine returns the 1-based line on which key is defined, or 0. It reads
// each line's leading key the way TOML spells one — bare, "basic" or 'literal'
// parts joined by dots — so a quoted key holding quotes, dots or spaces is found
// too (a regexp over the raw text missed those: found by FuzzReadState).
func findKeyLine(data []byte, key toml.Key) int {
	table := []string(nil)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimLeft(sc.Text(), " \t\ufeff")
		if strings.HasPrefix(line, "[") {
			inner := strings.TrimPrefix(strings.TrimPrefix(line, "["), "[")
			if parts, rest, ok := parseKey(inner); ok && strings.HasPrefix(rest, "]") {
				table = parts
				if keyHasPrefix(key, parts) && len(parts) == len(key) {
					return n
				}
			}
			continue
		}
		parts, rest, ok := parseKey(line)
		if !ok || !strings.HasPrefix(rest, "=") {
			continue
		}
		full := append(append([]string{}, table...), parts...)
		// The key itself, or a table it lives in (an inline table's line).
		if keyHasPrefix(key, full) {
			return n
		}
	}
	return 0
}

// keyHasPrefix reports whether key starts with the parts in prefix.
func keyHasPrefix(key toml.Key, prefix []string) bool {
	if len(prefix) == 0 || len(prefix) > len(key) {
		return false
	}
	for i, p := range prefix {
		if key[i] != p {
			return false
		}
	}
	return true
}

// parseKey reads a dotted TOML key at the start of s and returns its parts and
// what follows it (after white space); ok is false when s does not start with one.
func parseKey(s string) (parts []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		var part string
		switch {
		case strings.HasPrefix(s, `"`):
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, "", false
			}
			u, err := strconv.Unquote(s[:end+1])
			if err != nil {
				u = s[1:end] // an escape Go spells differently: close enough for a line number
			}
			part, s = u, s[end+1:]
		case strings.HasPrefix(s, "'"):
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := 0
			for end < len(s) && (s[end] >= 'A' && s[end] <= 'Z' || s[end] >= 'a' && s[end] <= 'z' ||
				s[end] >= '0' && s[end] <= '9' || s[end] == '_' || s[end] == '-') {
				end++
			}
			if end == 0 {
				return nil, "", false
			}
			part, s = s[:end], s[end:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s, true
		}
		s = s[1:]
	}
}
