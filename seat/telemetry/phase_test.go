package telemetry_test

import (
	"testing"

	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/telemetry"
)

// TestPhaseTextKeepsTheOutageWhileTheHeldMessageIsTried: between probes the
// phase names the outage (waiting-retry, in the harness's words); while the
// held message is tried again the phase is "submitting" and only the
// heartbeat's fault says the seat is still in its outage.
func TestPhaseTextKeepsTheOutageWhileTheHeldMessageIsTried(t *testing.T) {
	s := func(v string) *string { return &v }
	cause := "server error: high demand"
	cases := []struct {
		hb   telemetry.Heartbeat
		want string
	}{
		{telemetry.Heartbeat{Phase: s("idle")}, "idle"},
		{telemetry.Heartbeat{Phase: s("waiting-retry"), Waiting: s(cause + "; next probe in 2s"), Fault: class(machine.ClassTransient), FaultCause: s(cause)},
			"waiting-retry (" + cause + "; next probe in 2s)"},
		{telemetry.Heartbeat{Phase: s("submitting"), Waiting: s("m-1"), Fault: class(machine.ClassTransient), FaultCause: s(cause)},
			"submitting (m-1); transient outage: " + cause},
		{telemetry.Heartbeat{}, ""},
	}
	for _, c := range cases {
		if got := c.hb.PhaseText(); got != c.want {
			t.Errorf("PhaseText() = %q, want %q", got, c.want)
		}
	}
}

// class is a pointer to c, as a heartbeat read from its file holds it.
func class(c machine.Class) *machine.Class { return &c }
