package measure_test

import (
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// contract runs the battery on the simulator with the given behaviours
// switched off and returns what it wrote.
func contract(t *testing.T, broken string) state.Contract {
	t.Helper()
	rig, err := sim.Adapter{}.Measure(harness.MeasureSpec{Env: map[string]string{"PANTTY_SIM_BROKEN": broken}})
	if err != nil {
		t.Fatal(err)
	}
	home := tmuxtest.Dir(t)
	c, err := measure.Contract(home, rig, measure.Options{Pantty: seattest.Binary(t),
		Now: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), Revisit: 30 * 24 * time.Hour, Fail: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("contract (broken %q): %v", broken, err)
	}
	stored, err := state.LoadContract(home, "sim", c.Version, "")
	if err != nil || len(stored.Rows) != len(state.ContractRows) {
		t.Fatalf("stored contract: %+v, %v", stored, err)
	}
	for _, r := range stored.Rows {
		if r.Artifact == "" {
			t.Errorf("row %s stored without its artifact", r.Name)
		}
	}
	return stored
}

// TestContractOnTheSimulator: every row is met by the simulator as it is, and
// each row whose subject the simulator is made to lack fails — a measurement
// that cannot fail is not one.
func TestContractOnTheSimulator(t *testing.T) {
	t.Parallel()
	c := contract(t, "")
	if c.Version != "0.1" || c.Harness != "sim" || c.AsOf.IsZero() || !c.FailAfter.After(c.AsOf) {
		t.Fatalf("contract header: %+v", c)
	}
	for _, r := range c.Rows {
		if !r.Met {
			t.Errorf("row %s not met on the simulator: %s", r.Name, r.Value)
		}
	}
	for _, k := range []struct{ broken, row string }{
		{"escape", "cancel"},       // Escape does nothing mid-turn
		{"reinject", "compaction"}, // nothing re-injected after /compact
		{"cumulative", "context"},  // a running total reported as the current usage
	} {
		t.Run(k.broken, func(t *testing.T) {
			t.Parallel()
			c := contract(t, k.broken)
			for _, r := range c.Rows {
				if r.Name == k.row && r.Met {
					t.Errorf("with %s broken the %s row is met: %s", k.broken, k.row, r.Value)
				}
				if r.Name != k.row && !r.Met && !(k.broken == "escape" && r.Name != "cancel") {
					t.Errorf("with %s broken the %s row failed too: %s", k.broken, r.Name, r.Value)
				}
			}
		})
	}
}
