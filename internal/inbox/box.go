package inbox

import (
	"path/filepath"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
)

// Box is one seat's inbox on disk: Root is <seat>/inbox, Tmp the seat's
// directory for the temp files of atomic writes (never beside a target, where
// a watcher would see it).
type Box struct {
	Root string
	Tmp  string
	// Now is the clock a status's times are taken from (UpdatedAt, a set-aside
	// entry's EndedAt): nil is the wall clock; the driver gives its own, so
	// what it writes agrees with the decisions it makes on that clock.
	Now func() time.Time
}

// now reads the box's clock.
func (b Box) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// MsgsDir holds every accepted message, one file each: the id registry.
func (b Box) MsgsDir() string { return filepath.Join(b.Root, "msgs") }

// StatusDir holds the status of every open message that has one.
func (b Box) StatusDir() string { return filepath.Join(b.Root, "status") }

// The most pantty reads of one inbox file: a message's JSON may spell one
// character of the text as six (\u003c for <), and the metadata comes on
// top; a status (or the tally) is small TOML. Anything larger is refused
// from its size, never read (docs/state.md, "Limits").
const (
	MaxMessageFile = 6*guard.DefaultMaxMessageBytes + 64<<10
	MaxStatusFile  = 4 << 20
)

// readStatus decodes a status file (or the tally) strictly, bounded.
func (b Box) readStatus(path string, v any) error {
	data, err := fsafe.ReadBounded(path, MaxStatusFile)
	if err != nil {
		return err
	}
	return fsatomic.DecodeStrict(path, data, v)
}
