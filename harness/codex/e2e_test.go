package codex_test

// End-to-end tests against the REAL Codex CLI in a private tmux server, pointed
// at the loopback Responses-API stand-in through the seat's own CODEX_HOME. They
// need the binary that scripts/test.sh installs (or PANTTY_CODEX_BIN); without
// it they skip, except under CI, where a missing harness is a failure.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if a test leaves a tmux server, a driver or a codex
// process behind (codex's pane command line and its hooks name paths under
// tmuxtest.Root()).
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

// model is a model name Codex knows, so it starts without a metadata warning.
const model = "gpt-5.1-codex"

type rig struct {
	*seattest.E2ERig
	api *standin.Server
}

func codexBinary(t testing.TB) string {
	return seattest.RealBinary(t, codex.CachedBinary, "Codex CLI", codex.Version, codex.BinaryEnv)
}

func newRig(t testing.TB, name string, toml ...string) *rig {
	t.Helper()
	bin := codexBinary(t)
	dir := tmuxtest.Dir(t)
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "requests.jsonl"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	h := seattest.NewHarness(t, name, "codex",
		seattest.Env(map[string]string{"STANDIN_API_KEY": "standin-key"}),
		seattest.TOML(append([]string{fmt.Sprintf("command = %q", bin), `permission_mode = "danger-full-access"`}, toml...)...))
	cfg, err := h.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := codex.WriteProvider(codex.Home(h.Seat(), cfg), "standin", api.URL()+"/v1", "STANDIN_API_KEY", model); err != nil {
		t.Fatal(err)
	}
	return rigOf(h, api)
}

// rigOf is the rig of a seat h and its stand-in api: the suite reads the
// stand-in's log as seattest.E2ERequests.
func rigOf(h *seattest.Harness, api *standin.Server) *rig {
	return &rig{E2ERig: seattest.StandinRig(h, api, api.Requests), api: api}
}

// compaction returns how many compaction requests reached the stand-in, and
// the first turn request after the last of them (ok false when there is none).
func (r *rig) compaction() (n int, next standin.Request, ok bool) {
	reqs := r.api.Requests()
	last := -1
	for i, q := range reqs {
		if q.Kind == "compact" {
			n, last = n+1, i
		}
	}
	if last >= 0 {
		for _, q := range reqs[last+1:] {
			if q.Kind == "turn" {
				return n, q, true
			}
		}
	}
	return n, standin.Request{}, false
}

// TestE2E is the suite every real harness passes (seattest.E2E) on Codex:
// Codex names its own thread (pantty records it from the first bound turn
// end), its requests name the thread, the context comes from PostModelRequest,
// a cancel fires the Interrupt hook and no Stop, and the handoff reaches the
// first request after a compaction through SessionStart(compact), which Codex
// runs with the next turn.
func TestE2E(t *testing.T) {
	seattest.E2E{
		Adapter: codex.Adapter{}, Prefix: "cx", Messages: 6, CompactKind: "compact", Cycle: true,
		New: func(t *testing.T, name string, toml ...string) *seattest.E2ERig {
			return newRig(t, name, toml...).E2ERig
		},
		Corpus: map[string]string{"d-compact": "/compact", "d-new": "/new", "d-bang": "!touch {bang}",
			"d-space": " /compact", "d-slash": "/"},
		ContextSource: "PostModelRequest",
		Cron:          cronSeat, BadArg: "--no-such-flag", BadWords: "unexpected argument '--no-such-flag'",
		Outages: codexOutages,
		ResumeArgv: func(_ *seattest.Harness, id, argv string) error {
			if !strings.Contains(argv, " resume "+id+" --no-daemon") {
				return fmt.Errorf("%q does not resume thread %s with --no-daemon", argv, id)
			}
			return nil
		},
		AfterCancel: interruptedWithoutStop,
	}.Run(t)
}

// codexOutages are the stand-in's faults both Codex paths hold, in Codex's
// words (seattest.E2E.Outages).
var codexOutages = []seattest.E2EOutage{
	// A 401 ("unexpected status 401 Unauthorized: Incorrect API key
	// provided…", authentication_failed) is a means outage.
	{Name: "Credential", Fault: standinkit.FaultAuth, Class: machine.ClassMeans, Words: "cannot authenticate: unexpected status 401 Unauthorized"},
	// A 429 insufficient_quota ("Quota exceeded. Check your plan and
	// billing details.", billing_error) is a provider refusal: a wait.
	{Name: "Billing", Fault: standinkit.FaultBilling, Class: machine.ClassProvider, Words: "Quota exceeded. Check your plan and billing details."},
	// A 500 ("We’re currently experiencing high demand…", server_error)
	// is transient: the message goes back to the queue with backoff.
	{Name: "ServerError", Fault: standinkit.FaultServer, Class: machine.ClassTransient, Words: "server error: We’re currently experiencing high demand"},
	// A refused connection ("Connection failed: error sending request",
	// connection_failed) does not end Codex's turn: Codex reconnects by
	// itself ("Reconnecting… waiting for network"). The turn stays in
	// flight, the seat reports the means outage, and Codex's own
	// reconnect finishes the turn once the stand-in listens again.
	{Name: "ConnectionRefused", Fault: standinkit.FaultRefused, Class: machine.ClassMeans, Words: "cannot connect: Connection failed: error sending request"},
}

// interruptedWithoutStop is what Codex itself does on a cancel, on both
// paths: no Stop for the cancelled turn, and the Interrupt hook names it.
func interruptedWithoutStop(r *seattest.E2ERig, st inbox.Status) {
	for _, ev := range r.Events(hookwire.EvStop) {
		if ev.Fields.PromptID == st.PromptID {
			r.T.Fatalf("a Stop arrived for the cancelled turn: %+v", ev.Fields)
		}
	}
	r.WaitFor("the Interrupt hook of the cancelled turn", 10*time.Second, func() bool {
		for _, ev := range r.Events("Interrupt") {
			if ev.Fields.PromptID == st.PromptID {
				r.T.Logf("the Interrupt hook's event came %s after the message was settled cancelled", ev.ReceivedAt.Sub(st.EndedAt).Round(time.Millisecond))
				return true
			}
		}
		return false
	})
}
