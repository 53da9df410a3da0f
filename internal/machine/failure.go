package machine

// Class is whose problem a failed turn is, read from the harness's own
// words (hookwire.ClassifyFailure). It decides what becomes of the message, so
// an outage of the seat's means or of its provider never fails board work.
// It is the one spelling of a class: the classifier returns it, AfterFailure
// decides on it, and the records store its string form (heartbeat.toml's
// fault, health.toml's and recover's report's class), so the values are the
// file format. A new class is one constant here and its case in AfterFailure,
// plus the words that mean it in hookwire.ClassifyFailure's table.
type Class string

// The failure classes.
const (
	// ClassMeans: the harness cannot reach or use the model at all
	// (credentials, login, connection). The message stays queued, the driver
	// re-probes with backoff, the seat reports itself dead (recover's class
	// means) and the ladder may descend.
	ClassMeans Class = "means"
	// ClassProvider: the provider refuses this account for now (rate limit,
	// usage limit, credit balance): a wait shared by every seat on the
	// provider (providers.toml), re-probed.
	ClassProvider Class = "provider-refusal"
	// ClassTransient: the provider failed this request after the harness's
	// own retries (5xx, overloaded). The message goes back to the queue with
	// a per-seat backoff, up to [recovery] transient_attempts in a row.
	ClassTransient Class = "transient"
	// ClassWork: anything else, an error about the message itself. The
	// message fails (work-error).
	ClassWork Class = "work"
)

// Failure is a turn the harness ended on an error, as the decision sees it.
type Failure struct {
	Class Class
	// Transients is how many provider errors in a row the message had before
	// this one; Attempts is [recovery] transient_attempts.
	Transients, Attempts int
}

// Outcome is what becomes of a message whose turn failed.
type Outcome int

// The outcomes of a failed turn.
const (
	FailMessage     Outcome = iota // the message failed on its own merits (work-error)
	HoldForOutage                  // back at the head of the queue; the seat waits for the outage's probe
	GiveUpTransient                // one provider error too many: the message fails, the outage stays for the next
	WaitForProvider                // back in the queue until the provider's time (shared by its seats)
)

// AfterFailure decides a failed turn by its class: only a failure of the
// work fails the message; a means or transient outage holds the queue with
// the message as its probe, until a message has had transient_attempts
// provider errors in a row; a provider refusal waits for the provider.
func AfterFailure(f Failure) Outcome {
	switch f.Class {
	case ClassMeans:
		return HoldForOutage
	case ClassTransient:
		if f.Transients+1 >= f.Attempts {
			return GiveUpTransient
		}
		return HoldForOutage
	case ClassProvider:
		return WaitForProvider
	}
	return FailMessage
}

// TurnResult is what a turn-spawned seat's process left behind, as the
// decision sees it: the harness's result envelope, and whether an outage's
// failure was reported during the turn (a StopFailure not of class work).
type TurnResult struct {
	Refused  bool // an outage or refusal was reported during the turn: it decides
	Envelope bool // the process printed a result envelope that decodes
	Success  bool // the envelope's subtype is success and is_error is false
	Turns    int  // the model turns the envelope counts
}

// Verdict is what becomes of a turn-spawned message.
type Verdict int

// The verdicts on a turn-spawned message.
const (
	ByFailure  Verdict = iota // the reported failure decides (AfterFailure)
	NoEnvelope                // failed (work-error): no result envelope
	Processed                 // processed
	NoTurn                    // failed: success with zero model turns is no processing
	Failed                    // failed (work-error): the envelope says it failed
)

// AfterTurnResult judges a turn-spawned message: processed only when the
// envelope says success, not an error, with at least one model turn.
func AfterTurnResult(r TurnResult) Verdict {
	switch {
	case r.Refused:
		return ByFailure
	case !r.Envelope:
		return NoEnvelope
	case r.Success && r.Turns >= 1:
		return Processed
	case r.Success:
		return NoTurn
	}
	return Failed
}
