package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/pantty/pantty/internal/config"
)

var (
	harnessNamesMu sync.Mutex
	harnessNames   []string // in registration order
)

// KnowHarness adds a harness name to those seat.toml's harness key accepts.
// harness.Register calls it for every adapter it registers: seat holds the
// names, the harness package the adapters behind them.
func KnowHarness(name string) {
	harnessNamesMu.Lock()
	defer harnessNamesMu.Unlock()
	if !slices.Contains(harnessNames, name) {
		harnessNames = append(harnessNames, name)
	}
}

// HarnessNames returns the registered harness names in registration order:
// what seat.toml's harness key may name.
func HarnessNames() []string {
	harnessNamesMu.Lock()
	defer harnessNamesMu.Unlock()
	return append([]string(nil), harnessNames...)
}

// LoadConfig reads and validates a seat's seat.toml. Unknown keys and bad values
// are errors naming the file and line; nothing is silently defaulted except the
// documented optional fields.
func (s Seat) LoadConfig() (config.Config, error) {
	path := s.ConfigPath()
	c, err := s.ConfigFile().Read()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("%w %q (no %s)", ErrUnknownSeat, s.Name, path)
		}
		return c, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	if err := c.Validate(s.Name, HarnessNames()); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
	}
	if err := workdirApart(s, c.Workdir); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
	}
	return c, nil
}

// ErrBadConfig marks a seat.toml that does not validate (exit 2: fix the file).
var ErrBadConfig = errors.New("bad seat.toml")
