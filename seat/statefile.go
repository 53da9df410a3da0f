package seat

import (
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
)

// ReadState decodes a TOML state file strictly into v: a key v does not know is an
// error naming the file and line, a type error names the line, and a missing file
// is returned as fs.ErrNotExist (wrapped) so the caller can say "unknown".
func ReadState(path string, v any) error {
	data, err := ReadRegular(path)
	if err != nil {
		return err
	}
	return fsatomic.DecodeStrict(path, data, v)
}

// ReadCursor reads cursor.toml.
func (s Seat) ReadCursor() (inbox.Cursor, error) {
	var c inbox.Cursor
	return c, ReadState(s.CursorPath(), &c)
}
