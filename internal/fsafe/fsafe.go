// Package fsafe opens pantty's state files the one safe way: never through a
// symlink planted at the path, never blocking on a FIFO, never on anything but
// a regular file, and never reading more than the file kind may hold. A state
// root is shared with every process of the same user (and, without isolation,
// with the seat's model), so each of those is something a hostile writer can
// put there; every caller gets one clear error instead of a hang, a redirected
// write or a gigabyte in memory.
package fsafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// TooLargeError is a file over its kind's maximum: it names the file, its size
// and the limit, so the message says what to look at.
type TooLargeError struct {
	Path string
	Size int64 // at least this many bytes (a growing file may hold more)
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes, over the %d-byte maximum for this file", e.Path, e.Size, e.Max)
}

// ErrNotRegular is a path that holds a FIFO, a device, a socket or a directory
// where a regular file belongs.
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is a symlink where pantty reads or writes a state file.
var ErrSymlink = errors.New("is a symlink (refused: state files are never followed)")

// open opens path with flags plus O_NOFOLLOW and O_NONBLOCK (a FIFO then opens
// at once instead of waiting for a writer) and checks the result is a regular
// file. The check is on the open file, so nothing can swap the path between
// the check and the use.
func open(path string, flags int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flags|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		if errors.Is(err, syscall.ENXIO) { // a FIFO with no reader, opened for writing
			return nil, nil, fmt.Errorf("%s: %w (a FIFO)", path, ErrNotRegular)
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, fi, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadBounded reads the regular file at path, at most max bytes; a file over
// max is a *TooLargeError without its content being read (the size comes from
// fstat, and a file that grows while read is caught at max+1 bytes). A missing
// file is returned wrapping fs.ErrNotExist.
func ReadBounded(path string, max int64) ([]byte, error) {
	f, fi, err := open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Max: max}
	}
	return data, nil
}

// OpenAppend opens (creating with perm) a log that pantty appends to: a
// symlink at the path, a FIFO or any other non-regular file is refused, so a
// planted link cannot aim pantty's writes at another file and a FIFO cannot
// hang the writer.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	f, _, err := open(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	return f, err
}

// ReadTail reads the last n bytes (or fewer) of the regular file at path, the
// same safe way: a log's end for a report, however long the log has grown.
func ReadTail(path string, n int64) ([]byte, error) {
	f, fi, err := open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(fi.Size()-n, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, n))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// ReadDir lists a state directory; one that does not exist (yet) is empty,
// not an error: a seat that never received a message has no inbox/msgs.
func ReadDir(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ents, err
}
