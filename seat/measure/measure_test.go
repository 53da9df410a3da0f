package measure_test

import (
	"os"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

func run(t *testing.T, sigils *string) state.FactsFile {
	t.Helper()
	home := tmuxtest.Dir(t)
	rig, err := sim.Adapter{}.Measure(harness.MeasureSpec{Sigils: sigils})
	if err != nil {
		t.Fatal(err)
	}
	f, err := measure.Run(home, rig, measure.Options{Pantty: seattest.Binary(t),
		Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Revisit: 30 * 24 * time.Hour, Fail: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	got, err := state.LoadFacts(home, "sim", config.ShapeResident)
	if err != nil || got.Form != f.Form || got.Sigils != f.Sigils {
		t.Fatalf("facts file: %+v %v", got, err)
	}
	for _, o := range f.Observations {
		if o.Artifact == "" {
			t.Errorf("observation %s/%s has no artifact", o.Door, o.Name)
		} else if _, err := os.Stat(o.Artifact); err != nil {
			t.Errorf("artifact %s: %v", o.Artifact, err)
		}
		if o.Door == "board" && o.Dispatched {
			t.Errorf("board door dispatched %q", o.Input)
		}
	}
	return f
}

// The measurement records what it measured: the control dispatched raw, the
// guarded corpus did not, and the sigils are the simulator's configured ones.
func TestMeasureDispatchRecordsWhatItMeasured(t *testing.T) {
	t.Parallel()
	f := run(t, nil)
	if !f.ControlOK || f.Form != guard.FormFirstChar || f.Sigils != "/!" {
		t.Fatalf("default simulator: form %q sigils %q control %v", f.Form, f.Sigils, f.ControlOK)
	}
	hash := "#"
	g := run(t, &hash)
	if g.Sigils != "#" || g.Form != guard.FormFirstChar {
		t.Fatalf("simulator configured with '#': measured form %q sigils %q", g.Form, g.Sigils)
	}
}

func TestRawPasterRefusesASeatTheMeasurementDidNotCreate(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "notmine")
	if _, err := measure.NewRawPaster(h.Seat(), "anything"); err == nil {
		t.Fatal("the raw paster accepted a seat it did not create")
	}
}
