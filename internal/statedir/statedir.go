// Package statedir binds each of a seat's state files to the one record type
// it holds. A File[T] is the file's path, its read (bounded, no symlink or
// FIFO followed, strict TOML that names the file and line) and its atomic
// write, typed: a heartbeat can only be written to heartbeat.toml as a
// Heartbeat, and a reader of session.toml gets a Session or an error naming
// the file. Before it, every writer called one untyped Write(path, any) and
// every reader decoded into a value of its own choosing, so nothing but care
// kept a record and its file together.
//
// The bindings themselves are declared where the records are (package seat:
// Seat.SessionFile, Seat.HeartbeatFile, …); this package holds only the
// mechanism, and imports nothing of pantty but the two file layers.
package statedir

import (
	"github.com/pantty/pantty/internal/fsatomic"
)

// Reader reads a state file's bytes: the caller's bounded, link-refusing read
// (state.ReadRegular applies the limits table of docs/state.md). A missing
// file is returned wrapping fs.ErrNotExist.
type Reader func(path string) ([]byte, error)

// File is one state file holding one record type T.
type File[T any] struct {
	path  string
	tmp   string
	read  Reader
	check func(path string, v T) error
}

// Bind binds the file at path to T: read with read, written atomically
// through a temporary file in tmp (the same filesystem as path).
func Bind[T any](tmp, path string, read Reader) File[T] {
	return File[T]{path: path, tmp: tmp, read: read}
}

// Checked adds a check of a decoded record: a value the TOML decoder accepts
// but the record cannot mean (an out-of-range field) is a read error that
// names the file.
func (f File[T]) Checked(check func(path string, v T) error) File[T] {
	f.check = check
	return f
}

// Path is where the file is.
func (f File[T]) Path() string { return f.path }

// Read decodes the file strictly: a key T does not know is an error naming
// the file and line, and a missing file wraps fs.ErrNotExist so the caller can
// say "unknown". On an error the record returned is what was decoded so far.
func (f File[T]) Read() (T, error) {
	var v T
	data, err := f.read(f.path)
	if err != nil {
		return v, err
	}
	if err := fsatomic.DecodeStrict(f.path, data, &v); err != nil {
		return v, err
	}
	if f.check != nil {
		return v, f.check(f.path, v)
	}
	return v, nil
}

// Write replaces the file with v, atomically: a reader sees the old record or
// the new one, never a part.
func (f File[T]) Write(v T) error { return fsatomic.WriteState(f.tmp, f.path, v) }
