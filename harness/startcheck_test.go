package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

// homeAdapter is bareAdapter with a HomeUnprepared that answers as told.
type homeAdapter struct {
	bareAdapter
	missing []string
	err     error
}

func (a homeAdapter) Caps() Capabilities {
	return Capabilities{HomeUnprepared: func(state.Seat, config.Config, map[string]string) ([]string, error) {
		return a.missing, a.err
	}}
}

// TestCheckHomeTellsUnpreparedFromUnreadable: a home with answers missing is
// bad input and ErrHomeUnprepared (the driver refuses the launch for it),
// naming what is missing and the command; a home that could not be read is
// bad input for start and recover, but not ErrHomeUnprepared (the driver
// launches anyway: the harness may have been rewriting its file); none
// missing passes.
func TestCheckHomeTellsUnpreparedFromUnreadable(t *testing.T) {
	t.Parallel()
	s := state.Seat{Home: "/h", Name: "z"}
	err := CheckHome(homeAdapter{missing: []string{"onboarding not done"}}, s, config.Config{}, nil)
	if !errors.Is(err, ErrHomeUnprepared) || !errors.Is(err, state.ErrBadInput) ||
		!strings.Contains(err.Error(), "onboarding not done") || !strings.HasSuffix(err.Error(), "run 'pantty seat prepare-home z', then start it again") {
		t.Errorf("missing answers: got %v", err)
	}
	err = CheckHome(homeAdapter{err: errors.New(".claude.json: unexpected end of JSON input")}, s, config.Config{}, nil)
	if errors.Is(err, ErrHomeUnprepared) || !errors.Is(err, state.ErrBadInput) {
		t.Errorf("unreadable home: got %v", err)
	}
	if err := CheckHome(homeAdapter{}, s, config.Config{}, nil); err != nil {
		t.Errorf("prepared home: got %v", err)
	}
	if err := CheckHome(bareAdapter{}, s, config.Config{}, nil); err != nil {
		t.Errorf("no HomeUnprepared: got %v", err)
	}
}
