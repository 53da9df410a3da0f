package state

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/statedir"
)

// FileKind is one kind of file pantty reads from a state root, with the most
// it will read of one. Everything in a state root can be written by a process
// of the same user — and, without isolation, by the seat's model — so no read
// trusts a file's size: a file over its kind's maximum is one clear error
// naming it, never a gigabyte in memory or a stall (docs/state.md, "Limits").
type FileKind struct {
	Kind string // as docs/state.md's limits table names it
	Max  int64
	// match reports whether a path (its directory's base name and its own)
	// is of this kind; the first kind that matches wins.
	match func(dir, base string) bool
}

// FileKinds is the limits table, most specific first; the last row is every
// other state file. docs/state.md lists the same rows (a test checks).
var FileKinds = []FileKind{
	{"seat.toml", 1 << 20, func(_, b string) bool { return b == "seat.toml" }},
	// JSON may spell one character of the text as six (\u003c for <), and
	// the metadata comes on top.
	{"inbox message (inbox/msgs/<id>.json)", 6*guard.DefaultMaxMessageBytes + 64<<10,
		func(d, _ string) bool { return d == "msgs" }},
	{"reply (inbox/replies/<id>.txt)", MaxReplyBytes + 64<<10, func(d, _ string) bool { return d == "replies" }},
	// The harness's own payloads: a Stop event carries the whole last reply.
	{"hook event (events/, events/seen/)", 16 << 20, func(d, _ string) bool { return d == "events" || d == "seen" }},
	{"status line (statusline.json)", 1 << 20, func(_, b string) bool { return b == "statusline.json" }},
	{"any other state file (TOML)", 4 << 20, func(string, string) bool { return true }},
}

// maxFor is the limit for the file at path.
func maxFor(path string) int64 {
	dir, base := filepath.Base(filepath.Dir(path)), filepath.Base(path)
	for _, k := range FileKinds {
		if k.match(dir, base) {
			return k.Max
		}
	}
	return FileKinds[len(FileKinds)-1].Max
}

// ReadRegular reads a state file: no symlink followed, no FIFO waited on,
// nothing but a regular file, at most its kind's maximum (fsafe.ReadBounded).
func ReadRegular(path string) ([]byte, error) {
	data, err := fsafe.ReadBounded(path, maxFor(path))
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("read %s: %w", path, pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %w", err)
	}
	return data, nil
}

// ReadState decodes a TOML state file strictly into v: a key v does not know is an
// error naming the file and line, a type error names the line, and a missing file
// is returned as fs.ErrNotExist (wrapped) so the caller can say "unknown". It is
// for tests and tools that hold only a path (the parser fuzzers); pantty's own
// reads go through the files' bindings below, which use the same decode.
func ReadState(path string, v any) error {
	data, err := ReadRegular(path)
	if err != nil {
		return err
	}
	return fsatomic.DecodeStrict(path, data, v)
}

// The state files' bindings (statedir.File): each file with the one record
// it holds, read bounded and strict (ReadRegular, the limits table), written
// atomically through the seat's tmp/. docs/state.md describes each file.
func bind[T any](s Seat, path string) statedir.File[T] {
	return statedir.Bind[T](s.TmpDir(), path, ReadRegular)
}

// The files of the state root, shared by every seat: temp files in home/tmp.
func homeBind[T any](home, path string) statedir.File[T] {
	return statedir.Bind[T](HomeTmpDir(home), path, ReadRegular)
}
