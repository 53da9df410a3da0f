package claudecode_test

import (
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/standinkit"
)

// outage plays one fault of the stand-in against the real claude
// (seattest.PlayOutage): three messages queued, none failed, the seat names the
// outage in claude's words, all processed once after the fault clears.
func outage(t *testing.T, name string, fault standinkit.Fault, class, words string) {
	r := newRig(t, name, seattest.OutageTOML...)
	r.PlayOutage(r.api, r.Answered, fault, class, words)
}

// A 401 (authentication_failed, "Invalid API key · Fix external API key") is a
// means outage: the seat is dead until the key works, no message fails.
func TestCredentialOutageFailsNoMessage(t *testing.T) {
	outage(t, "cc-401", standinkit.FaultAuth, seat.FailMeans, "cannot authenticate: Invalid API key · Fix external API key")
}

// A 400 "credit balance is too low" (billing_error) is a provider refusal: a
// wait shared by the provider's seats, re-probed.
func TestBillingOutageIsAProviderWait(t *testing.T) {
	outage(t, "cc-400", standinkit.FaultBilling, seat.FailProvider, "Credit balance is too low")
}

// A 500 after claude's own retries (server_error) is transient: the message
// goes back to the queue with backoff.
func TestServerErrorOutageRetriesWithBackoff(t *testing.T) {
	outage(t, "cc-500", standinkit.FaultServer, seat.FailTransient, "server error: API Error: 500 Internal server error")
}

// A refused connection (server_error, "API Error: Connection refused — … (ECONNREFUSED)")
// is a means outage by its words: the seat is dead until the API listens again.
func TestConnectionRefusedOutageFailsNoMessage(t *testing.T) {
	outage(t, "cc-refused", standinkit.FaultRefused, seat.FailMeans, "cannot connect: API Error: Connection refused")
}
