package seattest

import (
	"testing"

	"github.com/pantty/pantty/seat/harnesses"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// Main is TestMain's body for a package of seat tests: every harness
// registered (seat/harnesses, as the pantty binary does; the harnesses
// seat.toml may name are the registered ones), then tmuxtest.LeakCheck
// (nothing left running afterwards).
func Main(m *testing.M) int {
	harnesses.Register()
	return tmuxtest.LeakCheck(m)
}
