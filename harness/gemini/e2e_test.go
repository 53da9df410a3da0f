package gemini_test

// End-to-end tests against the REAL Gemini CLI in a private tmux server,
// pointed at the loopback Gemini API stand-in by the seat's environment
// (GOOGLE_GEMINI_BASE_URL) with the seat's own GEMINI_CLI_HOME. They need the
// CLI that scripts/test.sh installs (or PANTTY_GEMINI_BIN); without it they
// skip, except under CI, where a missing harness is a failure.

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/gemini"
	"github.com/pantty/pantty/harness/gemini/standin"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/seattest"
)

// TestMain fails the package if a test leaves a tmux server, a driver or a
// gemini process behind.
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

type rig struct {
	*seattest.E2ERig
	api *standin.Server
}

func geminiBinary(t *testing.T) string {
	return seattest.RealBinary(t, gemini.CachedBinary, "Gemini CLI", gemini.Version, gemini.BinaryEnv)
}

func newRig(t *testing.T, name string, toml ...string) *rig {
	t.Helper()
	bin := geminiBinary(t)
	api, err := standin.Start(standin.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	h := seattest.NewHarness(t, name, "gemini-cli",
		seattest.Env(map[string]string{"GEMINI_API_KEY": "standin-key", "GOOGLE_GEMINI_BASE_URL": api.URL()}),
		seattest.TOML(append([]string{fmt.Sprintf("command = %q", bin)}, toml...)...))
	return rigOf(h, api)
}

// rigOf is the rig of a seat h and its stand-in api: the suite reads the
// stand-in's log as seattest.E2ERequests.
func rigOf(h *seattest.Harness, api *standin.Server) *rig {
	return &rig{E2ERig: seattest.StandinRig(h, api, api.Requests), api: api}
}

// TestE2E is the suite every real harness passes (seattest.E2E) on Gemini
// CLI: pantty chooses the session id, the Gemini API names no session in its
// requests, the context comes from the chat file, /compact is Gemini's alias
// of /compress (its end read from the chat file, no hook), and the handoff
// reaches the first request after it through BeforeAgent's
// additionalContext. A cancelled turn fires AfterAgent with its partial reply
// (measured); the suite checks it closes nothing.
func TestE2E(t *testing.T) {
	seattest.E2E{
		Adapter: gemini.Adapter{}, Prefix: "gm", Messages: 4, CompactKind: "compress", Cycle: true,
		New: func(t *testing.T, name string, toml ...string) *seattest.E2ERig {
			return newRig(t, name, toml...).E2ERig
		},
		Corpus: map[string]string{"d-compress": "/compress", "d-clear": "/clear", "d-bang": "!touch {bang}",
			"d-space": " /compress", "d-slash": "/",
			// ui.escapePastedAtSymbols: a mention in board text stays text,
			// in the workspace and outside it (where it opened a modal).
			"d-at": "@notes.txt", "d-at-out": "@/etc/hostname"},
		// A hostile repository's own .gemini/settings.json turns the escape
		// off: pantty's keys are at the CLI's system scope, which overrides
		// the workspace's (gemini.SystemSettingsPath).
		Workspace: map[string]string{"notes.txt": "the workspace note's secret content 7f3a",
			".gemini/settings.json": `{"ui": {"escapePastedAtSymbols": false}}`},
		AsReceived:    func(text string) string { return strings.ReplaceAll(text, "@", `\@`) },
		ContextSource: "chat file",
		Cron:          cronSeat, BadArg: "--no-such-flag", BadWords: "Unknown arguments: such-flag",
		Outages: []seattest.E2EOutage{
			// A refused connection is a means outage: with the seat's
			// general.retryFetchErrors = false the CLI ends the turn on it
			// ("fetch failed") instead of retrying inside the turn.
			{Name: "ConnectionRefused", Fault: standinkit.FaultRefused, Class: machine.ClassMeans, Words: "cannot connect"},
			// A 401 ends Gemini's turn at once with "✕ [API Error: {…"code":401…}]"
			// on the pane and AfterAgent's "[no response text]" (measured): the
			// hook reads the error line, authentication_failed, a means outage.
			// (A 5xx or 429 is retried inside the turn by the CLI: its own
			// test, TestE2EProviderRetriesAreAWait, with a pinned model.)
			{Name: "Credential", Fault: standinkit.FaultAuth, Class: machine.ClassMeans, Words: "cannot authenticate: [API Error: "},
		},
		ResumeArgv: func(_ *seattest.Harness, id, argv string) error {
			if !strings.Contains(argv, " --resume "+id) || strings.Contains(argv, "--session-id") {
				return fmt.Errorf("%q does not resume session %s", argv, id)
			}
			return nil
		},
	}.Run(t)
}

// TestRepliesAreExactAgainstAStreamingAPI: the stand-in streams a reply in
// several chunks, as Google's API does; the reply `send --wait` prints and
// the inbox keeps is the text once. Taken from AfterAgent's
// prompt_response, it was the text plus a garbled copy of its later chunks.
func TestRepliesAreExactAgainstAStreamingAPI(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-reply", `ready_timeout = "90s"`)
	r.Start()
	const want = "ACK: gemini board item GEM-1, streamed in three chunks"
	res := r.RunStdin("[standin:reply="+want+"]\nplease acknowledge", "seat", "send", r.Name, "--id", "gem-1", "--wait", "--timeout", "90s")
	if res.Code != 0 || res.Stdout != want+"\n" {
		t.Fatalf("send --wait: want exactly %q, got %s", want, res)
	}
	if rep, err := r.Seat().ReadReply(r.Status("gem-1")); err != nil || rep.Text != want {
		t.Fatalf("the inbox's reply: %q, %v; want %q", rep.Text, err, want)
	}
}

// TestNextMessageWaitsOutTheHooksNotTheRetry: after a turn, Gemini CLI draws
// "Executing Hooks" above its box for 3 s, and the driver, told of the
// turn's end by one of those hooks, pastes the next message at once. Its
// Enter must go: before 2026-12-06 the look before Enter read that line as
// a box not ready and sent nothing, and every message after the first
// waited for the Enter retry (submit_timeout, 5 s): 4 of 4, turn end → next
// evidence 5.15 s each. Under load a retry may still happen; all of them is
// the old behaviour.
func TestNextMessageWaitsOutTheHooksNotTheRetry(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-next")
	r.Start()
	ids := []string{"n1", "n2", "n3", "n4"}
	for _, id := range ids {
		r.Send(id, "hello "+id)
		r.Processed(id)
	}
	retried := 0
	for _, id := range ids[1:] {
		if strings.Contains(r.DriverLog(), "no submission evidence for "+id+": Enter retry") {
			retried++
		}
	}
	if retried == len(ids)-1 {
		t.Fatalf("every message after the first waited for the Enter retry\ndriver.log:\n%s", r.DriverLog())
	}
}

// TestQueuedMessagesFollowEachOtherAtOnce sends four messages at once and
// logs, for each after the first, the time from the last one's turn end
// (AfterAgent, recorded as Stop) to its turn start (BeforeAgent, recorded as
// UserPromptSubmit): a measurement (docs/gemini.md). While InputReady read
// the CLI's "Executing Hooks" line (a 3 s display timer) as a busy box,
// each waited about 3 s (3.17, 3.01, 3.08 s on 2026-12-06; 0.92, 0.84,
// 0.76 s since). It checks that each is processed, once, with no Enter
// retry.
func TestQueuedMessagesFollowEachOtherAtOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-queue")
	r.Start()
	ids := []string{"q1", "q2", "q3", "q4"}
	for _, id := range ids {
		r.Send(id, "hello "+id)
	}
	r.Processed(ids...)
	var gaps []string
	for i, id := range ids[1:] {
		prev, cur := r.Status(ids[i]), r.Status(id)
		gaps = append(gaps, cur.SubmittedAt.Sub(prev.EndedAt).Round(time.Millisecond).String())
	}
	t.Logf("RESULT turn end → the next queued message's UserPromptSubmit: %s", strings.Join(gaps, ", "))
	// Every queued message waiting for the Enter retry is the old behaviour
	// (the "Executing Hooks" line read as a busy box). Under the whole
	// suite's load (Gemini CLI taking ~30 s to come up) the first one or
	// two after start-up needed a retry in 2 of 4 full runs on 2026-12-06,
	// the later ones none: a slow paste commit, logged, not failed.
	retried := 0
	for _, id := range ids {
		if strings.Contains(r.DriverLog(), "no submission evidence for "+id+": Enter retry") {
			retried++
		}
	}
	if retried == len(ids) {
		t.Errorf("every queued message waited for the Enter retry\ndriver.log:\n%s", r.DriverLog())
	} else if retried > 0 {
		t.Logf("%d of %d queued messages needed the Enter retry (load)", retried, len(ids))
	}
	for id, n := range r.Turns() {
		if n != 1 {
			t.Errorf("%s reached the model %d times", id, n)
		}
	}
}
