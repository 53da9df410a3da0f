package gemini_test

import (
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/standinkit"
)

// outage plays one fault of the stand-in against the real gemini
// (seattest.PlayOutage): three messages queued, none failed, the seat names
// the outage in Gemini's words, all processed once after the fault clears.
func outage(t *testing.T, name string, fault standinkit.Fault, class, words string) {
	r := newRig(t, name, seattest.OutageTOML...)
	r.PlayOutage(r.api, r.Answered, fault, class, words)
}

// A refused connection is a means outage: with the seat's
// general.retryFetchErrors = false the CLI ends the turn on it ("fetch
// failed") instead of retrying inside the turn; the seat is dead until the
// API listens again, and no message fails.
func TestConnectionRefusedOutageFailsNoMessage(t *testing.T) {
	t.Parallel()
	outage(t, "gm-refused", standinkit.FaultRefused, seat.FailMeans, "cannot connect")
}

// A 401 ends Gemini's turn at once with "✕ [API Error: {…"code":401…}]" on
// the pane and AfterAgent's "[no response text]" (measured): the hook reads
// the error line, authentication_failed, a means outage; no message fails.
func TestCredentialOutageFailsNoMessage(t *testing.T) {
	t.Parallel()
	outage(t, "gm-401", standinkit.FaultAuth, seat.FailMeans, "cannot authenticate: [API Error: ")
}
