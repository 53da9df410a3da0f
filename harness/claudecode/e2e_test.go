package claudecode_test

// End-to-end tests against the REAL Claude Code binary in a private tmux server,
// pointed at the loopback Messages-API stand-in. They need the binary that
// scripts/test.sh installs (or PANTTY_CLAUDE_BIN); without it they skip, except
// under CI, where a missing harness is a failure.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/claudecode/standin"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if a test leaves a tmux server, a driver or a
// claude process behind (claude's command line names the seat's settings file,
// which lives under tmuxtest.Root()).
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

// apiKey is any key: the stand-in does not check it, claude only wants one, and
// PrepareHome pre-approves its last 20 characters.
const apiKey = "sk-ant-api03-standin-0000000000000000000000000000"

// rig is one real-claude seat with its own stand-in, HOME and tmux server.
type rig struct {
	*seattest.E2ERig
	api *standin.Server
}

func claudeBinary(t *testing.T) string {
	return seattest.RealBinary(t, claudecode.CachedBinary, "Claude Code", claudecode.Version, claudecode.BinaryEnv)
}

// newRig makes the seat; extra lines go into its seat.toml.
func newRig(t *testing.T, name string, extra ...string) *rig {
	t.Helper()
	bin := claudeBinary(t)
	dir := tmuxtest.Dir(t)
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "requests.jsonl"), Logf: t.Logf, KeepBodies: true})
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs last: the seat stops before its API goes.
	t.Cleanup(func() { api.Close() })
	home := filepath.Join(dir, "home")
	h := seattest.NewHarness(t, name, "claude-code",
		seattest.Env(map[string]string{
			"HOME":                    home,
			"ANTHROPIC_BASE_URL":      api.URL(),
			"ANTHROPIC_API_KEY":       apiKey,
			"CLAUDE_CODE_MAX_RETRIES": "0",
		}),
		seattest.TOML(append([]string{fmt.Sprintf("command = %q", bin)}, extra...)...))
	// What a person runs: every real-claude test starts on a HOME prepared by
	// `pantty seat prepare-home`, so a dialog it misses fails them all.
	if res := h.Run("seat", "prepare-home", name); res.Code != 0 {
		t.Fatalf("seat prepare-home: %s", res)
	}
	return rigOf(h, api)
}

// rigOf is the rig of a seat h and its stand-in api: the suite reads the
// stand-in's log as seattest.E2ERequests.
func rigOf(h *seattest.Harness, api *standin.Server) *rig {
	return &rig{E2ERig: seattest.StandinRig(h, api, api.Requests), api: api}
}

// request returns the last turn request that carried message id.
func (r *rig) request(id string) (standin.Request, bool) {
	var out standin.Request
	found := false
	for _, q := range r.api.Requests() {
		if got, _, _, ok := guard.MatchHeader(q.NewInput); ok && got == id && q.Kind == "turn" {
			out, found = q, true
		}
	}
	return out, found
}

// TestE2E is the suite every real harness passes (seattest.E2E) on Claude
// Code, serially (under parallel load a cancelled 30 s turn's late reply was
// once taken for the next message's): 20 messages in a row, the handoff cycle
// in its own test (TestCompactionCycleReinjectsTheHandoffOnRealClaude: it
// reaches the request through SessionStart(compact) at once), a cancel fires
// no hook, and a resume waits until claude has written the turn to its
// transcript (it writes in batches, up to ~150 ms after Stop: what a kill
// before that loses, no resume can carry; TestKillRightAfterATurnDoesNotWedgeTheSeat).
func TestE2E(t *testing.T) {
	seattest.E2E{
		Adapter: claudecode.Adapter{}, Prefix: "cc", Messages: 20, CompactKind: "compact", Serial: true,
		New: func(t *testing.T, name string, toml ...string) *seattest.E2ERig {
			return newRig(t, name, toml...).E2ERig
		},
		Corpus: map[string]string{"d-compact": "/compact", "d-clear": "/clear", "d-bang": "!touch {bang}",
			"d-space": " /x", "d-slash": "/"},
		Cron: cronSeat, BadArg: "--no-such-flag", BadWords: "unknown option '--no-such-flag'",
		Outages: []seattest.E2EOutage{
			// A 401 (authentication_failed, "Invalid API key · Fix external API
			// key") is a means outage: the seat is dead until the key works.
			{Name: "Credential", Fault: standinkit.FaultAuth, Class: machine.ClassMeans, Words: "cannot authenticate: Invalid API key · Fix external API key"},
			// A 400 "credit balance is too low" (billing_error) is a provider
			// refusal: a wait shared by the provider's seats, re-probed.
			{Name: "Billing", Fault: standinkit.FaultBilling, Class: machine.ClassProvider, Words: "Credit balance is too low"},
			// A 500 after claude's own retries (server_error) is transient: the
			// message goes back to the queue with backoff.
			{Name: "ServerError", Fault: standinkit.FaultServer, Class: machine.ClassTransient, Words: "server error: API Error: 500 Internal server error"},
			// A refused connection (server_error, "API Error: Connection
			// refused — … (ECONNREFUSED)") is a means outage by its words.
			{Name: "ConnectionRefused", Fault: standinkit.FaultRefused, Class: machine.ClassMeans, Words: "cannot connect: API Error: Connection refused"},
		},
		ResumeArgv: func(h *seattest.Harness, id, argv string) error {
			if !strings.Contains(argv, "--resume "+id) || !strings.Contains(argv, "--settings "+h.Seat().SettingsPath()) ||
				strings.Contains(argv, "--session-id") {
				return fmt.Errorf("%q does not resume session %s with the seat's settings", argv, id)
			}
			return nil
		},
		BeforeKill: func(r *seattest.E2ERig, id string) {
			r.WaitFor(id+"'s turn in claude's transcript", 10*time.Second, func() bool {
				cfg, err := r.Seat().LoadConfig()
				if err != nil {
					return false
				}
				found, _, _ := claudecode.Adapter{}.FindTurn(r.Seat(), cfg, r.Session().ID, id, r.Status(id).Nonce)
				return found
			})
		},
		AfterCancel: func(r *seattest.E2ERig, st inbox.Status) {
			for _, ev := range append(r.Events(hookwire.EvStop), r.Events(hookwire.EvStopFailure)...) {
				if ev.Fields.PromptID == st.PromptID {
					r.T.Fatalf("a turn end arrived for the cancelled prompt: %+v", ev.Fields)
				}
			}
		},
	}.Run(t)
}

// A SIGKILL right after a turn's Stop, before claude has written that turn to
// its transcript, can leave a transcript with no conversation in it, which
// claude accepts neither for --resume nor for --session-id. The seat must come
// back either way, on the same session id, and take the next message.
func TestKillRightAfterATurnDoesNotWedgeTheSeat(t *testing.T) {
	r := newRig(t, "cc-early")
	r.Start()
	r.Send("e1", "first turn of a fresh session")
	r.Processed("e1")
	before := r.Session()
	// The pane process: the harness dies with it (PR_SET_PDEATHSIG).
	if err := syscall.Kill(before.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.Send("e2", "after the kill")
	r.Processed("e2")
	after := r.Session()
	if after.ID != before.ID || after.Launches != before.Launches+1 {
		t.Fatalf("session before %+v, after %+v: want the same id and exactly one relaunch", before, after)
	}
	if n := r.Turns(); n["e2"] != 1 {
		t.Fatalf("model turns %v", n)
	}
	t.Logf("relaunched with resume=%v", after.Resumed)
}

// 5. A 429 with CLAUDE_CODE_MAX_RETRIES=0: StopFailure (error rate_limit) ends
// the turn at once; pantty classifies it as a provider refusal, leaves the
// message queued for after the wait, and the cursor stays where it was.
func TestRateLimitIsAProviderRefusal(t *testing.T) {
	r := newRig(t, "cc-429")
	r.Start()
	r.Send("q0", "fine")
	r.Processed("q0")
	r.Send("q1", "[standin:429 reset=120s] limited")
	var st inbox.Status
	r.WaitFor("q1 back in the queue as a provider refusal", 30*time.Second, func() bool {
		var err error
		st, err = r.Seat().ReadStatus("q1")
		return err == nil && st.State == inbox.StateQueued && st.Reason == "provider-refusal"
	})
	if st.Attempts != 1 || !st.NotBefore.After(time.Now()) {
		t.Fatalf("q1 %+v: want one attempt and a wait in the future", st)
	}
	failures := r.Events(hookwire.EvStopFailure)
	if len(failures) != 1 || failures[0].Fields.Error != "rate_limit" ||
		!strings.Contains(failures[0].Fields.LastAssistantMessage, "429") {
		t.Fatalf("StopFailure events %+v", failures)
	}
	r.CursorAt("q0", inbox.StateProcessed)
	refused := 0
	for _, q := range r.api.Requests() {
		if q.Status == 429 {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("%d requests answered 429, want 1 (CLAUDE_CODE_MAX_RETRIES=0: no retries)", refused)
	}
}
