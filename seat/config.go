package seat

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/pantty/pantty/internal/config"
)

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
