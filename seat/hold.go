package seat

import (
	"fmt"
	"time"
)

// Hold says, in one line, why the seat's queue is not moving now, or "" when
// nothing holds it: a stopped seat, no live driver, a state root the driver
// cannot write, or a phase the driver itself reports as a wait (a provider's
// refusal, a means outage, a dialog or a draft on the pane, relay …, named
// in the heartbeat's waiting). It reads only records (and, for a stale
// heartbeat, probes a write), so a script blocked in `send --wait` can be
// told what it waits for without asking the driver anything.
func (s Seat) Hold(now time.Time) string {
	if in, err := s.IntentFile().Read(); err == nil && in.Want == IntentStopped {
		return fmt.Sprintf("the seat is stopped; queued messages wait for a start: pantty seat start %s", s.Name)
	}
	if _, live, err := s.LiveOwner(); err == nil && !live {
		return fmt.Sprintf("no live driver runs; queued messages wait for one: pantty seat start %s", s.Name)
	}
	hb, err := s.HeartbeatFile().Read()
	if err != nil {
		return ""
	}
	if hb.Stale(now) {
		if werr := s.StateUnwritable(); werr != nil {
			return "state not writable: " + werr.Error()
		}
		return fmt.Sprintf("the driver's heartbeat is %s old (interval %s)", now.Sub(hb.At).Round(time.Second), hb.Interval.Duration)
	}
	switch hb.Phase {
	case PhaseSubmitting, PhaseInTurn, PhaseStarting, PhaseCompacting, PhaseCancelling:
		return "" // work goes on (in-turn's waiting names the message)
	case PhaseIdle:
		if hb.Waiting == "" {
			return ""
		}
	}
	if hb.Waiting == "" {
		return hb.Phase
	}
	return hb.Phase + ": " + hb.Waiting
}
