package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
)

// TestE2EProviderRetriesAreAWait: the stand-in answers every model request
// with a 500, or a 429 with Retry-After 30, for a while, then 200. Gemini CLI
// retries inside the turn and tells no hook why; its BeforeModel hook firing
// again within one model step is the retry (harness/gemini/attempts.go).
// During the outage the heartbeat, status and recover name the provider wait
// ("provider retrying", class transient) and a RequestFailed event records
// it; no message fails, and after it each is processed once (PlayOutage).
// The model is pinned: with "Auto" the router's own request is retried first,
// with no hook at all (docs/gemini.md, "Retries").
func TestE2EProviderRetriesAreAWait(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault standinkit.Fault
	}{{"ServerError", standinkit.FaultServer}, {"RateLimit", standinkit.FaultRateLimit}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, "gm-retry-"+strings.ToLower(c.name), `ready_timeout = "90s"`, `args = ["--model", "gemini-3.8-flash"]`)
			r.PlayOutage(r.api, r.Answered, c.fault, machine.ClassTransient, "provider retrying")
			if n := retryEvents(t, r.Seat().SeenDir()); n == 0 {
				t.Fatalf("no RequestFailed %s event among the seat's events", hookwire.ErrProviderRetrying)
			}
		})
	}
}

// retryEvents counts the RequestFailed events naming a retry in dir.
func retryEvents(t *testing.T, dir string) int {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range names {
		ev, err := hookwire.ReadEvent(filepath.Join(dir, e.Name()))
		if err == nil && ev.Kind == hookwire.EvRequestFailed && ev.Fields.Error == hookwire.ErrProviderRetrying {
			n++
		}
	}
	return n
}
