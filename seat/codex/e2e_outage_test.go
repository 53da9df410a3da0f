package codex_test

import (
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/standinkit"
)

// outage plays one fault of the stand-in against the real codex
// (seattest.PlayOutage): three messages queued, none failed, the seat names the
// outage in Codex's words, all processed once after the fault clears.
func outage(t *testing.T, name string, fault standinkit.Fault, class, words string) {
	r := newRig(t, name, seattest.OutageTOML...)
	r.PlayOutage(r.api, r.Answered, fault, class, words)
}

// A 401 ("unexpected status 401 Unauthorized: Incorrect API key provided…",
// named authentication_failed) is a means outage: the seat is dead until the
// key works, no message fails.
func TestCredentialOutageFailsNoMessage(t *testing.T) {
	t.Parallel()
	outage(t, "cx-401", standinkit.FaultAuth, seat.FailMeans, "cannot authenticate: unexpected status 401 Unauthorized")
}

// A 429 insufficient_quota ("Quota exceeded. Check your plan and billing
// details.", named billing_error) is a provider refusal: a wait, re-probed.
func TestBillingOutageIsAProviderWait(t *testing.T) {
	t.Parallel()
	outage(t, "cx-quota", standinkit.FaultBilling, seat.FailProvider, "Quota exceeded. Check your plan and billing details.")
}

// A 500 (Codex: "We’re currently experiencing high demand…", named
// server_error) is transient: the message goes back to the queue with backoff.
func TestServerErrorOutageRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	outage(t, "cx-500", standinkit.FaultServer, seat.FailTransient, "server error: We’re currently experiencing high demand")
}

// A refused connection ("Connection failed: error sending request", named
// connection_failed) does not end Codex's turn: Codex reconnects by itself
// ("Reconnecting… waiting for network"). The turn stays in flight, the seat
// reports the means outage, and Codex's own reconnect finishes the turn once
// the stand-in listens again.
func TestConnectionRefusedKeepsTheTurnUntilCodexReconnects(t *testing.T) {
	t.Parallel()
	outage(t, "cx-refused", standinkit.FaultRefused, seat.FailMeans, "cannot connect: Connection failed: error sending request")
}
