package seattest

import (
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/claudecode"
	"github.com/pantty/pantty/seat/codex"
	"github.com/pantty/pantty/seat/gemini"
	"github.com/pantty/pantty/seat/sim"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// RegisterAdapters registers every harness adapter, as the pantty binary does
// in its init, for a test package that reads seat.toml in-process: the
// harnesses seat.toml may name are the registered ones.
func RegisterAdapters() {
	for _, a := range []seat.Adapter{sim.Adapter{}, claudecode.Adapter{}, codex.Adapter{}, gemini.Adapter{}} {
		seat.Register(a)
	}
}

// Main is TestMain's body for a package of seat tests: the adapters
// registered, then tmuxtest.LeakCheck (nothing left running afterwards).
func Main(m *testing.M) int {
	RegisterAdapters()
	return tmuxtest.LeakCheck(m)
}
