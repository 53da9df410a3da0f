package measure

import (
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/state"
)

// Throwaway is startThrowaway's seat for the paste-commit measurement
// (pastecommit_test.go), which drives the pane itself.
type Throwaway struct{ th *throwaway }

// StartThrowaway starts a throwaway seat for rig.
func StartThrowaway(rig harness.MeasureRig, o Options) (Throwaway, error) {
	th, err := startThrowaway(rig, o, "tmux")
	return Throwaway{th}, err
}

// Seat is the throwaway seat.
func (t Throwaway) Seat() state.Seat { return t.th.s }

// Detector is the rig's detector for the seat.
func (t Throwaway) Detector() harness.Detector { return t.th.det }

// Close stops and removes the seat.
func (t Throwaway) Close() { t.th.close() }
