package machine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTransitions pins the transitions the driver relies on, including the
// ones that must not happen.
func TestTransitions(t *testing.T) {
	cases := []struct {
		from Phase
		on   Event
		to   Phase
		ok   bool
	}{
		{Starting, Ready, Idle, true},
		{Idle, Pasted, Submitting, true},
		{Submitting, Evidenced, InTurn, true},
		{InTurn, Settled, Idle, true},
		{Submitting, Settled, Idle, true},
		// A message settling while the queue is held leaves the seat waiting.
		{Provider, Settled, Provider, true},
		{Means, Settled, Means, true},
		{Retry, Settled, Retry, true},
		{InTurn, CancelBegun, Cancelling, true},
		{Cancelling, CancelHeld, InTurn, true},
		{Cancelling, CancelSawPrompt, Submitting, true},
		{Idle, CompactBegun, Compacting, true},
		{Compacting, CycleEnded, Idle, true},
		{Relay, RelayLeft, Idle, true},
		{InTurn, HarnessGone, Relaunching, true},
		{Relaunching, Launched, Starting, true},
		{Provider, ProviderCleared, Idle, true},
		{InTurn, StopAsked, Stopping, true},
		// Stopping is final.
		{Stopping, Settled, Stopping, true},
		{Stopping, Ready, Stopping, true},
		{Stopping, Pasted, Stopping, true},
		// Unnamed pairs: reported, and the event's usual target is taken.
		{InTurn, Pasted, Submitting, false},
		{Idle, Evidenced, InTurn, false},
		{Idle, RelayLeft, Idle, false},
		{Compacting, ProviderCleared, Idle, false},
	}
	for _, c := range cases {
		to, ok := Step(c.from, c.on)
		if to != c.to || ok != c.ok {
			t.Errorf("Step(%s, %s) = %s, %v; want %s, %v", c.from, c.on, to, ok, c.to, c.ok)
		}
	}
}

// TestEveryEventHasARule reads this package's source for the Event constants
// so a new event without a rule (or a rule naming a phase that does not
// exist) fails here, not in a seat.
func TestEveryEventHasARule(t *testing.T) {
	events := constsOfType(t, "Event")
	if len(events) < 20 {
		t.Fatalf("found only %d Event constants: the source scan is broken", len(events))
	}
	ruled := map[Event]bool{}
	for _, r := range Rules {
		ruled[r.On] = true
		if len(r.From) == 0 {
			t.Errorf("rule %s has no From phase", r.On)
		}
		for _, p := range append(append([]Phase{}, r.From...), r.To) {
			if p != Stay && !contains(Phases, p) {
				t.Errorf("rule %s names phase %q, not in Phases", r.On, p)
			}
		}
	}
	for _, name := range events {
		if !ruled[Event(name)] {
			t.Errorf("event %q has no rule", name)
		}
	}
	if got := constsOfType(t, "Phase"); len(got) != len(Phases)+1 { // + Stay
		t.Errorf("Phase constants %v, Phases lists %d", got, len(Phases))
	}
}

// constsOfType returns the string values of the constants of type typ
// declared in machine.go.
func constsOfType(t *testing.T, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "machine.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == typ {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				out = append(out, strings.Trim(lit.Value, `"`))
			}
		}
		return true
	})
	return out
}

// TestDocTable checks that docs/architecture.md shows this table as it is.
func TestDocTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const begin, end = "<!-- machine:begin -->\n", "<!-- machine:end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/architecture.md has no %q … %q section", strings.TrimSpace(begin), end)
	}
	if got, want := doc[i+len(begin):j], Markdown(); got != want {
		t.Errorf("docs/architecture.md's state × event table is not machine.Rules; replace it with:\n%s", want)
	}
}

func TestHoldOrder(t *testing.T) {
	cases := []struct {
		b    Boundary
		want string
	}{
		{Boundary{Phase: Idle}, ""},
		{Boundary{Phase: Provider}, ""}, // the outage hold is decided after, with the clock
		{Boundary{Phase: Idle, InFlight: true, Cycle: true}, "a message is in flight"},
		{Boundary{Phase: Stopping}, "stopping"},
		{Boundary{Phase: Idle, PersonsTurn: true}, "a person's turn is running"},
		{Boundary{Phase: Idle, Blocked: true, CommandRunning: true}, "dispatch facts unsupported"},
		{Boundary{Phase: Compacting, Cycle: true}, "a compaction cycle runs"},
		{Boundary{Phase: Idle, CommandRunning: true}, "a command is running"},
		// A state write that failed holds everything but a flight already
		// pasted (its turn runs on; its records are written when they can be).
		{Boundary{Phase: Held, StateUnwritable: true, CommandRunning: true, Blocked: true}, "state not writable"},
		{Boundary{Phase: InTurn, InFlight: true, StateUnwritable: true}, "a message is in flight"},
	}
	for _, c := range cases {
		if got := c.b.Hold(); got != c.want {
			t.Errorf("%+v.Hold() = %q, want %q", c.b, got, c.want)
		}
	}
}

func TestNext(t *testing.T) {
	now := time.Date(2026, 12, 4, 2, 0, 0, 0, time.UTC)
	later := now.Add(90 * time.Second)
	a := Queued{ID: "a"}
	b := Queued{ID: "b"}
	cases := []struct {
		name     string
		commands bool
		queue    []Queued
		stepDone bool
		want     Pick
	}{
		{"empty queue", false, nil, false, Pick{Choice: Nothing}},
		{"head delivered", false, []Queued{a, b}, false, Pick{Choice: Deliver, ID: "a"}},
		{"commands first", true, []Queued{a}, false, Pick{Choice: RunCommand}},
		{"head backs off, b does not overtake", false, []Queued{{ID: "a", NotBefore: later}, b}, false, Pick{Choice: WaitUntil, ID: "a", Wait: 90 * time.Second}},
		{"backoff over", false, []Queued{{ID: "a", NotBefore: now}}, false, Pick{Choice: Deliver, ID: "a"}},
		{"outage time is the outage hold's", false, []Queued{{ID: "a", NotBefore: later, OutageHeld: true}}, false, Pick{Choice: Deliver, ID: "a"}},
		{"step ran: fresh session first", false, []Queued{a}, true, Pick{Choice: Recycle, ID: "a"}},
		{"step ran, nothing queued", false, nil, true, Pick{Choice: Nothing}},
	}
	for _, c := range cases {
		if got := Next(now, c.commands, c.queue, c.stepDone); got != c.want {
			t.Errorf("%s: Next = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestAfterSilence: what a message with no submission evidence comes to, case
// by case, at unit speed (the driver's onEvidenceTimeout runs the answer).
func TestAfterSilence(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Silence
		want Answer
	}{
		{"a turn runs: late, not missing", Silence{Busy: true, Closed: true, Tries: 3, MaxTries: 3}, WaitLonger},
		{"the record closed it", Silence{Closed: true, MaxTries: 3}, ClosedByRecord},
		{"first silence: Enter again", Silence{MaxTries: 3}, RetryEnter},
		{"last retry left", Silence{Tries: 2, MaxTries: 3}, RetryEnter},
		{"no retries left", Silence{Tries: 3, MaxTries: 3}, Undelivered},
		{"no retries configured", Silence{}, Undelivered},
		{"a recovered delivery gets queued again", Silence{Tries: 3, MaxTries: 3, Recovered: true}, Requeue},
		{"a recovered delivery still retries Enter first", Silence{Tries: 1, MaxTries: 3, Recovered: true}, RetryEnter},
	} {
		if got := AfterSilence(c.s); got != c.want {
			t.Errorf("%s: AfterSilence(%+v) = %d, want %d", c.name, c.s, got, c.want)
		}
	}
}

// TestDeadlines pins which of the flight's timers runs in which state, and
// from when.
func TestDeadlines(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	look, sub := t0.Add(time.Second), t0.Add(2*time.Second)
	const timeout, ceiling = 5 * time.Second, time.Hour
	cases := []struct {
		name                string
		f                   Flight
		evidence, turnLimit time.Time
	}{
		{"nothing in flight", Flight{}, time.Time{}, time.Time{}},
		{"pasted: evidence from the Enter", Flight{Submitting: true, LookFrom: look}, look.Add(timeout), time.Time{}},
		{"turn shape: no Enter to retry", Flight{Submitting: true, TurnShape: true, LookFrom: look}, time.Time{}, time.Time{}},
		{"evidenced: the ceiling from the turn's start", Flight{Submitted: true, LookFrom: look, SubmittedAt: sub}, time.Time{}, sub.Add(ceiling)},
		{"turn shape in turn: the ceiling", Flight{Submitted: true, TurnShape: true, SubmittedAt: sub}, time.Time{}, sub.Add(ceiling)},
		{"cancelling a paste: no timer", Flight{Submitting: true, Cancelling: true, LookFrom: look}, time.Time{}, time.Time{}},
		{"cancelling a turn: no timer", Flight{Submitted: true, Cancelling: true, SubmittedAt: sub}, time.Time{}, time.Time{}},
		{"a ceiling cancel that did not hold", Flight{Submitted: true, SubmittedAt: sub, CeilingSpent: true}, time.Time{}, time.Time{}},
		{"retrying late in the turn: the harness's retry budget from the first retry",
			Flight{Submitted: true, SubmittedAt: sub, RetryingSince: sub.Add(55 * time.Minute), RetryBudget: 10 * time.Minute},
			time.Time{}, sub.Add(65 * time.Minute)},
		{"retrying early: the ceiling is later than the budget",
			Flight{Submitted: true, SubmittedAt: sub, RetryingSince: sub.Add(time.Minute), RetryBudget: 10 * time.Minute},
			time.Time{}, sub.Add(ceiling)},
	}
	for _, c := range cases {
		ev, tl := Deadlines(c.f, timeout, ceiling)
		if !ev.Equal(c.evidence) || !tl.Equal(c.turnLimit) {
			t.Errorf("%s: Deadlines = (%v, %v), want (%v, %v)", c.name, ev, tl, c.evidence, c.turnLimit)
		}
	}
}

// TestAfterFailure pins what a failed turn does to its message, by class.
func TestAfterFailure(t *testing.T) {
	cases := []struct {
		f    Failure
		want Outcome
	}{
		{Failure{Class: ClassWork, Attempts: 5}, FailMessage},
		{Failure{Class: "", Attempts: 5}, FailMessage},
		{Failure{Class: ClassMeans, Transients: 40, Attempts: 5}, HoldForOutage}, // a means outage has no budget: it waits
		{Failure{Class: ClassProvider, Attempts: 5}, WaitForProvider},
		{Failure{Class: ClassTransient, Transients: 0, Attempts: 5}, HoldForOutage},
		{Failure{Class: ClassTransient, Transients: 3, Attempts: 5}, HoldForOutage},
		{Failure{Class: ClassTransient, Transients: 4, Attempts: 5}, GiveUpTransient}, // the fifth in a row
		{Failure{Class: ClassTransient, Transients: 0, Attempts: 1}, GiveUpTransient},
	}
	for _, c := range cases {
		if got := AfterFailure(c.f); got != c.want {
			t.Errorf("AfterFailure(%+v) = %d, want %d", c.f, got, c.want)
		}
	}
}

// TestAfterTurnResult pins the turn-spawned judgement: processed only on a
// successful envelope with a model turn; a reported outage decides first.
func TestAfterTurnResult(t *testing.T) {
	cases := []struct {
		r    TurnResult
		want Verdict
	}{
		{TurnResult{Refused: true, Envelope: true, Success: true, Turns: 1}, ByFailure},
		{TurnResult{}, NoEnvelope},
		{TurnResult{Envelope: true, Success: true, Turns: 1}, Processed},
		{TurnResult{Envelope: true, Success: true, Turns: 0}, NoTurn},
		{TurnResult{Envelope: true, Success: false, Turns: 3}, Failed},
	}
	for _, c := range cases {
		if got := AfterTurnResult(c.r); got != c.want {
			t.Errorf("AfterTurnResult(%+v) = %d, want %d", c.r, got, c.want)
		}
	}
}
