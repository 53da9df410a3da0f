// Package machine names the seat driver's state: the phases a seat is in, the
// events that move it between them, and the decisions the driver takes at a
// turn boundary, as pure functions of what the driver knows and the time.
//
// Before this package the phase was a string set from twelve files and the
// rule for "may the next message go out now" lived in one method reading a
// dozen fields, so neither could be tested without a real pane. Here every
// phase change is a named transition in one table (Rules), the table is the
// state × event table in docs/architecture.md (checked by a test), and the
// driver logs any change the table does not name — the seat tests fail on
// such a line. Nothing here does I/O or reads the clock: callers pass now.
package machine

import (
	"fmt"
	"strings"
)

// Phase is what the driver is doing, as recorded in heartbeat.toml. The
// values are the file format: renaming one breaks readers of older seats.
type Phase string

// The driver's phases.
const (
	Starting    Phase = "starting"         // a harness launched; waiting for it to come up
	Idle        Phase = "idle"             // at a turn boundary; the queue may run
	Submitting  Phase = "submitting"       // a message pasted; waiting for the harness's evidence
	InTurn      Phase = "in-turn"          // the harness runs a turn for the message in flight
	Cancelling  Phase = "cancelling"       // stopping the turn in flight from outside
	Compacting  Phase = "compacting"       // the compaction cycle runs
	Relay       Phase = "relay"            // a person owns the input box; the queue waits
	Provider    Phase = "waiting-provider" // the provider refused (rate, billing): nothing goes out before its time
	Means       Phase = "waiting-means"    // the harness cannot reach the model: re-probing with backoff
	Retry       Phase = "waiting-retry"    // the provider failed a request: the message is retried with backoff
	Relaunching Phase = "relaunching"      // the harness is gone or failed to launch; a new one is on its way
	Stopping    Phase = "stopping"         // the driver is stopping the seat
	Held        Phase = "held"             // a state write failed: nothing is pasted until the pending records are written
)

// Phases lists every phase in the order the documentation shows them.
var Phases = []Phase{Starting, Idle, Submitting, InTurn, Cancelling, Compacting, Relay, Provider, Means, Retry, Relaunching, Held, Stopping}

// Waiting reports whether p holds the queue for an outage or a refusal: a
// message that settles in such a phase leaves the seat waiting, not idle.
func (p Phase) Waiting() bool { return p == Provider || p == Means || p == Retry }

// Event is what happened to the driver, named by its cause.
type Event string

// The events that change the phase.
const (
	Launched         Event = "launched"           // a harness process was launched (start, relaunch, rung change)
	Ready            Event = "ready"              // the harness came up (SessionStart, adopted pane, lazy start, turn shape)
	Pasted           Event = "pasted"             // a guarded message went to the pane (or to a spawned turn)
	Inherited        Event = "inherited"          // a new driver adopted a message an older one left mid-delivery
	InheritedInTurn  Event = "inherited-in-turn"  // the same, with its submission evidence already recorded
	Evidenced        Event = "evidenced"          // the harness's submission evidence bound the message in flight
	Spawned          Event = "spawned"            // turn shape: the one-turn process for the message is running
	AsksPerson       Event = "asks-person"        // mid-turn, the harness asks for a person (the ceiling still applies)
	HarnessRetries   Event = "harness-retries"    // mid-turn, a request failed and the harness retries by itself
	RetryWentThrough Event = "retry-went-through" // mid-turn, a request the harness retried went through
	PersonAnswered   Event = "person-answered"    // mid-turn, every question to a person was answered or withdrawn
	Settled          Event = "settled"            // the message in flight is final (processed or failed)
	Requeued         Event = "requeued"           // an inherited message without evidence went back to the queue
	Drained          Event = "drained"            // at a boundary, nothing (more) to submit
	Blocked          Event = "blocked"            // the seat's dispatch facts are unsupported: nothing is submitted
	CancelBegun      Event = "cancel"             // a cancel of the turn in flight began
	CancelSawPrompt  Event = "cancel-saw-prompt"  // the cancel found the prompt already recorded: wait for its evidence
	CancelHeld       Event = "cancel-held"        // the turn did not stop: it is still in flight
	CompactBegun     Event = "compact"            // the compaction cycle pasted /compact
	CycleEnded       Event = "cycle-ended"        // the compaction cycle finished (done or failed)
	RelayEntered     Event = "relay"              // a person's client took the input box
	RelayLeft        Event = "relay-left"         // the person left; the queue may run
	DraftHeld        Event = "draft-held"         // a person's draft is in the input box: the queue waits
	DialogShown      Event = "dialog-shown"       // the pane shows a dialog, not the input box: the queue waits for a person
	ProviderRefused  Event = "provider-refused"   // the provider refused (rate limit, billing): wait for its time
	ProviderCleared  Event = "provider-cleared"   // the provider's wait is over
	MeansLost        Event = "means-lost"         // the harness cannot reach the model (credential, connection)
	RequestFailed    Event = "request-failed"     // the provider failed the request; retry with backoff
	HarnessGone      Event = "harness-gone"       // the harness exited or its pane vanished: relaunch
	LaunchFailed     Event = "launch-failed"      // a launch (relaunch, step, rung change) failed
	GaveUp           Event = "gave-up"            // the harness exited before it came up too many times in a row
	StopAsked        Event = "stop"               // `seat stop` asked the driver to stop
	StateUnwritable  Event = "state-unwritable"   // at a boundary, some record could not be written: the queue holds
	StateWritten     Event = "state-written"      // every pending record was written again: the queue may run
)

// any is the From of a rule that applies in every phase but Stopping: once
// stopping, nothing but the stop moves the driver.
var anyPhase = []Phase{Starting, Idle, Submitting, InTurn, Cancelling, Compacting, Relay, Provider, Means, Retry, Relaunching, Held}

// Rule is one named transition: in any phase of From, On moves the driver to
// To (Stay: the phase does not change, only what it waits for).
type Rule struct {
	On   Event
	From []Phase
	To   Phase
	Why  string
}

// Stay is a Rule's To when the event leaves the phase as it is.
const Stay Phase = ""

// Rules is the driver's state × event table. Every phase change the driver
// makes is one of these; docs/architecture.md shows them (TestDocTable).
var Rules = []Rule{
	{Launched, anyPhase, Starting, "start, relaunch or rung change launched a harness"},
	{Ready, []Phase{Starting, Relaunching, Idle, Provider, Means, Retry, Held}, Idle, "the harness came up"},
	{Ready, []Phase{Relay}, Stay, "the harness came up while a person (or a dialog) holds the pane: the next boundary looks"},
	{Inherited, []Phase{Starting, Idle}, Submitting, "adopted mid-delivery: wait for the evidence as if just sent"},
	{InheritedInTurn, []Phase{Starting, Idle}, InTurn, "adopted mid-turn: wait for the turn end under the ceiling"},
	{Pasted, []Phase{Idle, Provider, Means, Retry}, Submitting, "a guarded message was pasted"},
	{Evidenced, []Phase{Submitting, Cancelling, InTurn}, InTurn, "submission evidence bound the message"},
	{Spawned, []Phase{Submitting}, InTurn, "turn shape: its process runs the message"},
	{AsksPerson, []Phase{InTurn, Cancelling}, InTurn, "the heartbeat names the question; the ceiling still applies"},
	{HarnessRetries, []Phase{InTurn, Submitting, Cancelling}, InTurn, "the heartbeat names the failure the harness retries"},
	{RetryWentThrough, []Phase{InTurn}, InTurn, "the heartbeat no longer names the failure; the turn goes on"},
	{PersonAnswered, []Phase{InTurn}, InTurn, "the heartbeat no longer names the question; the turn goes on"},
	{Settled, []Phase{Provider, Means, Retry}, Stay, "an outage or refusal still holds the queue"},
	{Settled, anyPhase, Idle, "the message is final"},
	{Requeued, []Phase{Submitting}, Idle, "no evidence after a driver restart: queued again"},
	{Blocked, anyPhase, Idle, "the heartbeat says why nothing is submitted"},
	{Drained, anyPhase, Idle, "a boundary with nothing to submit"},
	{CancelBegun, []Phase{Submitting, InTurn, Provider, Means, Retry}, Cancelling, "Escape goes to the pane"},
	{CancelSawPrompt, []Phase{Cancelling}, Submitting, "the prompt was recorded: its evidence decides"},
	{CancelHeld, []Phase{Cancelling, InTurn}, InTurn, "the turn did not stop (its evidence may have come while the pane was watched)"},
	{CompactBegun, []Phase{Idle, Provider, Means, Retry, Starting}, Compacting, "the cycle pasted /compact"},
	{CycleEnded, anyPhase, Idle, "the cycle is over"},
	{RelayEntered, anyPhase, Relay, "a person's client holds the input box"},
	{RelayLeft, []Phase{Relay}, Idle, "back to direct"},
	{DraftHeld, anyPhase, Relay, "a draft in the input box holds the queue"},
	{DialogShown, anyPhase, Relay, "a dialog holds the queue until a person answers it"},
	{ProviderRefused, anyPhase, Provider, "nothing goes out before the provider's time"},
	{ProviderCleared, []Phase{Provider}, Idle, "the provider's time has come"},
	{MeansLost, anyPhase, Means, "re-probe with backoff; the message waits in the queue"},
	{RequestFailed, anyPhase, Retry, "retry with backoff; the message waits in the queue"},
	{HarnessGone, anyPhase, Relaunching, "relaunch the same session"},
	{LaunchFailed, anyPhase, Relaunching, "the next heartbeat or sweep tries again"},
	{GaveUp, anyPhase, Relaunching, "the harness cannot come up: the start fails with its words"},
	{StateUnwritable, []Phase{Idle, Provider, Means, Retry}, Held, "a record is not durable: no key goes to the pane until it is written"},
	{StateWritten, []Phase{Held}, Idle, "the pending records are written: the queue may run"},
	{StopAsked, anyPhase, Stopping, "the driver stops the seat; every later event leaves it stopping"},
}

// Lookup returns the rule that moves from on event on. ok is false when no
// rule names the pair; the rule returned then carries the event's usual target
// (its first rule's To) so a driver can keep working while it reports the gap.
//
// Stopping is final: every event leaves a stopping driver stopping (before
// the table, a message settling during a stop set the phase back to idle).
func Lookup(from Phase, on Event) (r Rule, ok bool) {
	if from == Stopping {
		return Rule{On: on, From: []Phase{Stopping}, To: Stay, Why: "stopping is final"}, true
	}
	fallback := Rule{On: on, To: Stay}
	found := false
	for _, r := range Rules {
		if r.On != on {
			continue
		}
		if !found {
			fallback, found = r, true
		}
		if contains(r.From, from) {
			return r, true
		}
	}
	return fallback, false
}

// Step returns the phase event on moves from to, and whether a rule names
// the pair.
func Step(from Phase, on Event) (Phase, bool) {
	r, ok := Lookup(from, on)
	if r.To == Stay {
		return from, ok
	}
	return r.To, ok
}

func contains(ps []Phase, p Phase) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// Markdown renders Rules as the table docs/architecture.md holds.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| event | from | to | why |\n| --- | --- | --- | --- |\n")
	b.WriteString("| every event | `stopping` | (stays) | stopping is final |\n")
	for _, r := range Rules {
		from := phaseList(r.From)
		to := "`" + string(r.To) + "`"
		if r.To == Stay {
			to = "(stays)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.On, from, to, r.Why)
	}
	return b.String()
}

func phaseList(ps []Phase) string {
	if len(ps) == len(anyPhase) && contains(ps, Starting) && !contains(ps, Stopping) {
		return "any but `stopping`"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = "`" + string(p) + "`"
	}
	return strings.Join(names, ", ")
}
