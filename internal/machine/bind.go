package machine

// InFlight is the message in flight as the binding of the harness's turn
// events sees it. The nonce is the one recorded in the message's status, not
// an in-memory submission: a flight a new driver inherited has none, and
// its evidence must still bind.
type InFlight struct {
	ID, Nonce string
	Submitted bool   // its submission evidence already bound it
	PromptID  string // the harness's prompt id, from that evidence
}

// Prompt is a UserPromptSubmit as the binding sees it.
type Prompt struct {
	// Header is true when the prompt carries a guard header (pantty built
	// it); HeaderID and HeaderNonce are what the header names.
	Header                bool
	HeaderID, HeaderNonce string
	SessionMatches        bool // the event names the seat's session
}

// PromptVerdict is what a UserPromptSubmit does.
type PromptVerdict int

// The verdicts on a UserPromptSubmit.
const (
	// Foreign: a prompt pantty did not put in flight — a person typing, or
	// pantty's own text in another session. The seat counts as busy until
	// that turn ends.
	Foreign PromptVerdict = iota
	// LateEvidence: pantty's header for a message while none is in flight:
	// evidence that came after the driver settled or requeued the message.
	// The driver checks that message's record; the turn is still counted
	// as one pantty does not own.
	LateEvidence
	// Bind: the evidence of the message in flight — it is submitted now.
	Bind
	// Repeated: evidence for a message already bound: nothing changes.
	Repeated
)

// OnPrompt binds a UserPromptSubmit to fl (nil: nothing in flight) by the
// guard header's id and nonce and by the session: all three must match.
func OnPrompt(fl *InFlight, p Prompt) PromptVerdict {
	switch {
	case p.Header && fl != nil && p.HeaderID == fl.ID && p.HeaderNonce != "" && p.HeaderNonce == fl.Nonce && p.SessionMatches:
		if fl.Submitted {
			return Repeated
		}
		return Bind
	case p.Header && fl == nil:
		return LateEvidence
	}
	return Foreign
}

// TurnEnd is a Stop or StopFailure as the binding sees it.
type TurnEnd struct {
	Failure        bool   // StopFailure
	PromptID       string // the harness's prompt id; "" when its hook names none
	SessionMatches bool
	// PersonsPrompt is the prompt id of a person's turn the driver waits on.
	PersonsPrompt string
	// CancelEscaped: a cancel of the message in flight has sent Escape, so
	// its pane watches settle the message, not this event.
	CancelEscaped bool
	// TurnShape: a turn-spawned seat, whose result envelope decides the
	// message; the hook only tells of an outage.
	TurnShape bool
}

// EndVerdict is what a turn end does.
type EndVerdict int

// The verdicts on a turn end.
const (
	NotOurs          EndVerdict = iota // no message of pantty's turn ended: nothing
	PersonsTurnEnded                   // the person's turn the seat waited on ended
	KeptForCancel                      // ours, under a cancel: kept for the cancel to settle
	ToEnvelope                         // ours, turn shape: the envelope decides (a failure's class is noted)
	TurnDone                           // ours: the turn ended well: the message is processed
	TurnFailed                         // ours: the turn failed; its class decides (AfterFailure)
)

// Ours reports whether the verdict binds the end to the message in flight
// (a self-naming harness's session id may be learnt from it).
func (v EndVerdict) Ours() bool { return v >= KeptForCancel }

// OnTurnEnd binds a turn end to fl: only a message whose evidence bound it,
// in the seat's session, with the same prompt id when the hook names one.
// Anything else is not pantty's turn, or the end of a person's.
func OnTurnEnd(fl *InFlight, e TurnEnd) EndVerdict {
	if fl == nil || !fl.Submitted || !e.SessionMatches || (e.PromptID != "" && e.PromptID != fl.PromptID) {
		if e.PromptID != "" && e.PromptID == e.PersonsPrompt {
			return PersonsTurnEnded
		}
		return NotOurs
	}
	switch {
	case e.CancelEscaped:
		return KeptForCancel
	case e.TurnShape:
		return ToEnvelope
	case e.Failure:
		return TurnFailed
	}
	return TurnDone
}
