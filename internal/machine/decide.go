package machine

import "time"

// Boundary is what the driver knows when it asks whether the queue may move.
type Boundary struct {
	Phase          Phase
	InFlight       bool // a message is between paste and its final state
	PersonsTurn    bool // a turn pantty did not submit is running (a person typed)
	Blocked        bool // the seat's dispatch facts are unsupported
	Cycle          bool // a compaction cycle runs
	CommandRunning bool // the command door pasted a command and waits for it
	// StateUnwritable: a record the driver wrote is not durable (a full or
	// read-only state root); nothing is pasted until it is (write-ahead).
	StateUnwritable bool
}

// Hold names why nothing may be submitted at this boundary, in the order the
// driver has always checked them; "" means the queue may move.
func (b Boundary) Hold() string {
	switch {
	case b.InFlight:
		return "a message is in flight"
	case b.PersonsTurn:
		return "a person's turn is running"
	case b.Phase == Stopping:
		return "stopping"
	case b.StateUnwritable:
		return "state not writable"
	case b.Blocked:
		return "dispatch facts unsupported"
	case b.Cycle:
		return "a compaction cycle runs"
	case b.CommandRunning:
		return "a command is running"
	}
	return ""
}

// Queued is one queued message as the boundary decision sees it.
type Queued struct {
	ID        string
	NotBefore time.Time // a backoff: not submitted before this
	// OutageHeld is true when NotBefore is an outage's or a refusal's probe
	// time: the seat-wide outage hold decides for it, not NotBefore.
	OutageHeld bool
}

// Choice is what the driver does at a boundary.
type Choice int

// The choices at a boundary.
const (
	Nothing    Choice = iota // nothing to submit: the seat is idle
	RunCommand               // a queued command goes first (commands never wait behind messages)
	WaitUntil                // the head of the queue backs off; look again after Pick.Wait
	Recycle                  // step shape: the session ran its step; start a fresh one for Pick.ID
	Deliver                  // submit Pick.ID
)

// Pick is the boundary decision.
type Pick struct {
	Choice Choice
	ID     string
	Wait   time.Duration
}

// Next decides the boundary for a queue in delivery order (queued messages
// only). commands says whether the command door has a request waiting;
// stepDone whether a step-shaped seat's session already ran its step. The
// head of the queue decides: a later message never overtakes one that backs
// off.
func Next(now time.Time, commands bool, queue []Queued, stepDone bool) Pick {
	if commands {
		return Pick{Choice: RunCommand}
	}
	if len(queue) == 0 {
		return Pick{Choice: Nothing}
	}
	head := queue[0]
	if !head.OutageHeld && now.Before(head.NotBefore) {
		return Pick{Choice: WaitUntil, ID: head.ID, Wait: head.NotBefore.Sub(now)}
	}
	if stepDone {
		return Pick{Choice: Recycle, ID: head.ID}
	}
	return Pick{Choice: Deliver, ID: head.ID}
}

// Silence is what the driver knows when a pasted message has shown no
// submission evidence within submit_timeout.
type Silence struct {
	Busy      bool // the pane shows a turn running: the evidence is late, not missing
	Closed    bool // the harness's own record settled the message (its hook was lost)
	Tries     int  // Enter retries sent so far
	MaxTries  int  // submit_retries
	Recovered bool // inherited from a driver killed mid-delivery, maybe before it pasted
}

// Answer is what the driver does about a silence.
type Answer int

// The answers to a silence.
const (
	WaitLonger     Answer = iota // a turn runs: arm the evidence timer once more
	ClosedByRecord               // the harness's record closed the message: nothing more
	RetryEnter                   // send Enter again (the paste is never repeated: evidence could exist)
	Requeue                      // a recovered delivery that never reached the model: queue it again
	Undelivered                  // fail the message: no evidence after every retry
)

// AfterSilence decides what a silence means, in the order the driver has
// always weighed it: a running turn first, then the harness's own record,
// then the Enter retries, then a recovered delivery's second chance.
func AfterSilence(s Silence) Answer {
	switch {
	case s.Busy:
		return WaitLonger
	case s.Closed:
		return ClosedByRecord
	case s.Tries < s.MaxTries:
		return RetryEnter
	case s.Recovered:
		return Requeue
	}
	return Undelivered
}
