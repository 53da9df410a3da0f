package machine

import "testing"

// TestOnPrompt pins what binds submission evidence to the message in
// flight: its id, a non-empty nonce equal to the recorded one, and the
// seat's session — each alone is not enough.
func TestOnPrompt(t *testing.T) {
	pasted := &InFlight{ID: "m1", Nonce: "n1"}
	bound := &InFlight{ID: "m1", Nonce: "n1", Submitted: true, PromptID: "p1"}
	noNonce := &InFlight{ID: "m1"}
	ours := Prompt{Header: true, HeaderID: "m1", HeaderNonce: "n1", SessionMatches: true}
	with := func(f func(*Prompt)) Prompt { p := ours; f(&p); return p }
	cases := []struct {
		name string
		fl   *InFlight
		p    Prompt
		want PromptVerdict
	}{
		{"the flight's evidence", pasted, ours, Bind},
		{"the same evidence again", bound, ours, Repeated},
		{"a person's prompt, nothing in flight", nil, Prompt{SessionMatches: true}, Foreign},
		{"a person's prompt during a flight", pasted, Prompt{SessionMatches: true}, Foreign},
		{"pantty's header, nothing in flight: late", nil, ours, LateEvidence},
		{"another message's header", pasted, with(func(p *Prompt) { p.HeaderID = "m2" }), Foreign},
		{"a forged nonce", pasted, with(func(p *Prompt) { p.HeaderNonce = "forged" }), Foreign},
		{"no nonce on either side", noNonce, with(func(p *Prompt) { p.HeaderNonce = "" }), Foreign},
		{"another session", pasted, with(func(p *Prompt) { p.SessionMatches = false }), Foreign},
		// Late evidence is recognised in any session: the driver checks the
		// message's own record (its nonce) before it acts on it.
		{"pantty's header, nothing in flight, another session", nil, with(func(p *Prompt) { p.SessionMatches = false }), LateEvidence},
	}
	for _, c := range cases {
		if got := OnPrompt(c.fl, c.p); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

// TestOnTurnEnd pins which turn end settles the message in flight, and in
// what order a cancel, the turn shape and a failure decide.
func TestOnTurnEnd(t *testing.T) {
	pasted := &InFlight{ID: "m1", Nonce: "n1"}
	bound := &InFlight{ID: "m1", Nonce: "n1", Submitted: true, PromptID: "p1"}
	stop := TurnEnd{PromptID: "p1", SessionMatches: true}
	with := func(f func(*TurnEnd)) TurnEnd { e := stop; f(&e); return e }
	cases := []struct {
		name string
		fl   *InFlight
		e    TurnEnd
		want EndVerdict
	}{
		{"its Stop", bound, stop, TurnDone},
		{"its StopFailure", bound, with(func(e *TurnEnd) { e.Failure = true }), TurnFailed},
		{"a hook that names no prompt", bound, with(func(e *TurnEnd) { e.PromptID = "" }), TurnDone},
		{"nothing in flight", nil, stop, NotOurs},
		{"before its evidence", pasted, stop, NotOurs},
		{"before its evidence, a hook that names no prompt", pasted, with(func(e *TurnEnd) { e.PromptID = "" }), NotOurs},
		{"another session", bound, with(func(e *TurnEnd) { e.SessionMatches = false }), NotOurs},
		{"another prompt", bound, with(func(e *TurnEnd) { e.PromptID = "p2" }), NotOurs},
		{"the person's turn, during a flight", bound, with(func(e *TurnEnd) { e.PromptID, e.PersonsPrompt = "p2", "p2" }), PersonsTurnEnded},
		{"the person's turn, nothing in flight", nil, with(func(e *TurnEnd) { e.PersonsPrompt = "p1" }), PersonsTurnEnded},
		// The person's turn is matched by its prompt id alone, as the driver
		// recorded it from that turn's UserPromptSubmit.
		{"the person's turn, another session", nil, with(func(e *TurnEnd) { e.PersonsPrompt, e.SessionMatches = "p1", false }), PersonsTurnEnded},
		{"after the cancel's Escape", bound, with(func(e *TurnEnd) { e.CancelEscaped = true }), KeptForCancel},
		{"a failure after the Escape: the cancel still settles", bound, with(func(e *TurnEnd) { e.CancelEscaped, e.Failure = true, true }), KeptForCancel},
		{"turn shape: the envelope decides", bound, with(func(e *TurnEnd) { e.TurnShape, e.Failure = true, true }), ToEnvelope},
		{"turn shape under a cancel: the cancel first", bound, with(func(e *TurnEnd) { e.TurnShape, e.CancelEscaped = true, true }), KeptForCancel},
	}
	for _, c := range cases {
		got := OnTurnEnd(c.fl, c.e)
		if got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
		if ours := c.want == KeptForCancel || c.want == ToEnvelope || c.want == TurnDone || c.want == TurnFailed; got.Ours() != ours {
			t.Errorf("%s: Ours() = %v", c.name, got.Ours())
		}
	}
}
