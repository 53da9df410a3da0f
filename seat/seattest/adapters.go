package seattest

import (
	"testing"

	"github.com/pantty/pantty/harness/all"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// Main is TestMain's body for a package of seat tests: every harness
// registered (harness/all, as the pantty binary does; the harnesses
// seat.toml may name are the registered ones), then tmuxtest.LeakCheck
// (nothing left running afterwards).
func Main(m *testing.M) int {
	all.Register()
	return tmuxtest.LeakCheck(m)
}
