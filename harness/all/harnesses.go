// Package harnesses is the one list of the harnesses pantty drives. Every
// program that reads seat.toml in-process — the pantty binary, the tests, the
// benchmarks and the soak's synthetic seats — registers them through
// Register, so seat.toml's harness key, `pantty hook`'s flags and the
// measure targets are the same everywhere, and a new harness is added to the
// list here once. (Before, the list was written out in cmd/pantty and again
// in seat/seattest, and scripts/bench had none: its seats failed seat.toml's
// validation with "want one of" and nothing after it.)
package all

import (
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/gemini"
	"github.com/pantty/pantty/harness/sim"
)

// All returns every adapter, in the order pantty documents them.
func All() []harness.Adapter {
	return []harness.Adapter{sim.Adapter{}, claudecode.Adapter{}, codex.Adapter{}, gemini.Adapter{}}
}

// Register makes every adapter of All available by name (harness.Register).
func Register() {
	for _, a := range All() {
		harness.Register(a)
	}
}
