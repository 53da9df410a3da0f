package machine

import "time"

// Flight is the message in flight as the driver's two per-message timers
// see it: the evidence timer (no submission evidence within submit_timeout
// of an Enter) and the turn ceiling.
type Flight struct {
	Submitting bool // pasted (or inherited mid-delivery): its submission evidence is awaited
	Submitted  bool // its evidence bound it: a turn runs for it
	Cancelling bool // a cancel's pane watches decide its end: neither timer runs
	TurnShape  bool // a turn-spawned seat: there is no Enter to retry, so no evidence timer
	// LookFrom is when the driver last sent Enter for it, or last looked at
	// a silent pane and decided to wait longer.
	LookFrom    time.Time
	SubmittedAt time.Time // when its evidence bound it: the turn's start
	// CeilingSpent: a cancel at the turn ceiling did not hold, and is not
	// tried again; the turn runs on to its end or a person.
	CeilingSpent bool
	// RetryingSince is when the harness was first seen retrying a failed
	// model request inside this turn (a RequestFailed event), and
	// RetryBudget how long the harness's own retries may last from there
	// (harness.Capabilities.RetryBudget): the ceiling waits at least that
	// long, so an outage ends the turn on the harness's own error — a
	// provider wait — and not on the ceiling, which fails the message.
	RetryingSince time.Time
	RetryBudget   time.Duration
}

// Deadlines says when the evidence timer and the turn ceiling fire for f; a
// zero time means that timer does not run. The driver sets both timers from
// this after every wake-up, so no handler arms or stops them by hand: a
// timer runs exactly while the state it belongs to holds.
func Deadlines(f Flight, submitTimeout, ceiling time.Duration) (evidence, turnCeiling time.Time) {
	if f.Cancelling {
		return time.Time{}, time.Time{}
	}
	if f.Submitting && !f.TurnShape {
		evidence = f.LookFrom.Add(submitTimeout)
	}
	if f.Submitted && !f.CeilingSpent {
		turnCeiling = f.SubmittedAt.Add(ceiling)
		if !f.RetryingSince.IsZero() {
			if budget := f.RetryingSince.Add(f.RetryBudget); budget.After(turnCeiling) {
				turnCeiling = budget
			}
		}
	}
	return evidence, turnCeiling
}
