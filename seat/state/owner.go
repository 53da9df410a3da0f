package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/internal/statedir"
)

// Owner is owner.toml: who holds owner.lock. Readers judge the holder live from
// the pid AND its start time (never by taking the lock themselves, which would
// make a concurrent start fail).
type Owner struct {
	Holder   string    `toml:"holder"`    // the id a --takeover must name
	PID      int       `toml:"pid"`       // the driver process
	PIDStart uint64    `toml:"pid_start"` // its start time in clock ticks (/proc/PID/stat)
	Host     string    `toml:"host"`
	Started  time.Time `toml:"started"`
}

// String names the holder the way refusals print it.
func (o Owner) String() string {
	return fmt.Sprintf("holder %s (pid %d on %s since %s)", o.Holder, o.PID, o.Host, o.Started.Format(time.RFC3339))
}

// Live reports whether the recorded holder process still exists as recorded.
func (o Owner) Live() bool {
	host, _ := os.Hostname()
	return o.PID > 0 && o.Host == host && procid.Alive(o.PID, o.PIDStart)
}

// LiveOwner returns the recorded holder if it is live. It never touches the lock.
func (s Seat) LiveOwner() (Owner, bool, error) {
	o, err := s.OwnerFile().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return o, false, nil
	}
	if err != nil {
		return o, false, err
	}
	return o, o.Live(), nil
}

// OwnerFile is owner.toml. A pid_start out of range is refused: BurntSushi/toml
// decodes a negative integer into a uint64 by wrapping it (found by
// FuzzReadState), a corrupt record, not a start time.
func (s Seat) OwnerFile() statedir.File[Owner] {
	return bind[Owner](s, s.OwnerPath()).Checked(func(path string, o Owner) error {
		if o.PIDStart > 1<<63-1 {
			return fmt.Errorf("%s: pid_start is out of range (negative in the file?)", path)
		}
		return nil
	})
}

func (s Seat) LockPath() string { return s.path("owner.lock") }

func (s Seat) OwnerPath() string { return s.path("owner.toml") }
