package claudecode_test

// End-to-end tests against the REAL Claude Code binary in a private tmux server,
// pointed at the loopback Messages-API stand-in. They need the binary that
// scripts/test.sh installs (or PANTTY_CLAUDE_BIN); without it they skip, except
// under CI, where a missing harness is a failure.

import (
	"fmt"
	"github.com/pantty/pantty/internal/guard"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/claudecode"
	"github.com/pantty/pantty/seat/claudecode/standin"
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
	*seattest.Harness
	api *standin.Server
}

func claudeBinary(t *testing.T) string {
	t.Helper()
	bin, err := claudecode.CachedBinary()
	if err != nil {
		msg := fmt.Sprintf("%v; run scripts/test.sh (it installs Claude Code %s into the harness cache) or set %s",
			err, claudecode.Version, claudecode.BinaryEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
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
	return &rig{Harness: h, api: api}
}

// turns counts, per pantty message id, the model turns whose new input carried
// its guard header: what reached "the model", not what pantty recorded.
func (r *rig) turns() map[string]int {
	n := map[string]int{}
	for _, q := range r.api.Requests() {
		if q.Kind != "turn" {
			continue
		}
		if id, _, _, ok := guard.MatchHeader(q.NewInput); ok {
			n[id]++
		}
	}
	return n
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

// findTurn looks for message id's finished turn in claude's own transcript.
func (r *rig) findTurn(id string) (bool, string, error) {
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		return false, "", err
	}
	st := r.Status(id)
	return claudecode.Adapter{}.FindTurn(r.Seat(), cfg, r.Session().ID, id, st.Nonce)
}

// cursorAt waits briefly for cursor.toml to stand at id in state: the driver
// writes a message's final status first and the cursor right after it.
func (r *rig) cursorAt(id, state string) seat.Cursor {
	r.T.Helper()
	var c seat.Cursor
	r.WaitFor(fmt.Sprintf("the cursor at %s (%s)", id, state), 5*time.Second, func() bool {
		var err error
		c, err = r.Seat().ReadCursor()
		return err == nil && c.ID == id && c.State == state
	})
	return c
}

func (r *rig) processed(ids ...string) {
	r.T.Helper()
	r.WaitFinal(60*time.Second, ids...)
	for _, id := range ids {
		if st := r.Status(id); st.State != seat.StateProcessed {
			r.T.Fatalf("message %s: %s (%s: %s)\ndriver.log:\n%s", id, st.State, st.Reason, st.Detail, r.DriverLog())
		}
	}
}

// 1. The board door on the real binary: paste → UserPromptSubmit evidence bound
// by the guard header → Stop bound by prompt_id and session_id → processed, the
// cursor advanced; then 20 in a row, each reaching the model exactly once.
func TestSubmitEvidenceTurnEndAndExactlyOnce(t *testing.T) {
	r := newRig(t, "cc-once")
	r.Start()
	sess := r.Session()

	r.Send("m01", "first message")
	r.processed("m01")
	st := r.Status("m01")
	if st.PromptID == "" || st.SessionID != sess.ID || !strings.Contains(st.Evidence, seat.EvUserPromptSubmit) ||
		!strings.Contains(st.TurnEnd, seat.EvStop) {
		t.Fatalf("m01 status %+v: want UserPromptSubmit evidence, a Stop turn end, the seat's session", st)
	}
	var stop seat.Event
	for _, ev := range r.Events(seat.EvStop) {
		if ev.File == st.TurnEnd {
			stop = ev
		}
	}
	if stop.Fields.PromptID != st.PromptID || stop.Fields.SessionID != sess.ID ||
		!strings.Contains(stop.Fields.LastAssistantMessage, "msg=m01 nonce="+st.Nonce) {
		t.Fatalf("the Stop that closed m01: %+v", stop.Fields)
	}
	r.cursorAt("m01", seat.StateProcessed)

	ids := []string{"m01"}
	for i := 2; i <= 20; i++ {
		id := fmt.Sprintf("m%02d", i)
		ids = append(ids, id)
		r.Send(id, fmt.Sprintf("message %d of 20\nwith a second line", i))
	}
	r.processed(ids...)
	turns := r.turns()
	for _, id := range ids {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want exactly once (all: %v)", id, turns[id], turns)
		}
	}
	if c := r.cursorAt("m20", seat.StateProcessed); c.Closed != 20 {
		t.Fatalf("cursor closed %d messages, want 20", c.Closed)
	}
}

// 2. The board door does not dispatch on the real binary: slash commands, a
// shell escape, a leading space and a lone slash reach the model as text. The
// control is the command door: `seat command -- /compact` does compact.
func TestBoardDoorDoesNotDispatchCommandDoorDoes(t *testing.T) {
	r := newRig(t, "cc-dispatch")
	r.Start()
	sess := r.Session()
	bang := "dispatched-by-bang"
	corpus := map[string]string{
		"d-compact": "/compact",
		"d-clear":   "/clear",
		"d-bang":    "!touch " + bang,
		"d-space":   " /x",
		"d-slash":   "/",
	}
	var ids []string
	for id, text := range corpus {
		ids = append(ids, id)
		r.Send(id, text)
	}
	slices.Sort(ids)
	r.processed(ids...)
	for id, text := range corpus {
		q, ok := r.request(id)
		if !ok || !strings.Contains(q.NewInput, "\n"+text+"\n") {
			t.Errorf("%s: the model did not receive %q as text (request %+v)", id, text, q)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Work, bang)); err == nil {
		t.Errorf("%q ran a shell command", corpus["d-bang"])
	}
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			t.Errorf("a board text compacted the seat: %+v", q)
		}
	}
	if n := len(r.Events(seat.EvPreCompact)); n != 0 {
		t.Errorf("%d PreCompact events from board texts", n)
	}
	if got := r.Session().ID; got != sess.ID {
		t.Errorf("session changed from %s to %s (a /clear ran?)", sess.ID, got)
	}
	for _, ev := range r.Events(seat.EvSessionStart) {
		if ev.Fields.SessionID != sess.ID || ev.Fields.Source == "clear" {
			t.Errorf("SessionStart %+v: a /clear ran", ev.Fields)
		}
	}

	// The positive control: the command door's /compact really compacts.
	if res := r.Run("seat", "command", r.Name, "--", "/compact"); res.Code != 0 {
		t.Fatalf("seat command /compact: %s", res)
	}
	r.WaitFor("the compaction (summarisation request and PostCompact)", 60*time.Second, func() bool {
		compacted := false
		for _, q := range r.api.Requests() {
			compacted = compacted || q.Kind == "compact" && q.Status == 200
		}
		return compacted && len(r.Events(seat.EvPostCompact)) == 1
	})
	if pre := r.Events(seat.EvPreCompact); len(pre) != 1 || pre[0].Fields.Trigger != "manual" {
		t.Fatalf("PreCompact events %+v", pre)
	}
	// The seat is still the same session and still takes messages, and the
	// compaction replaced the history: the next turn sends fewer messages.
	var before standin.Request
	for _, q := range r.api.Requests() {
		if q.Kind == "turn" {
			before = q
		}
	}
	r.Send("d-after", "after the compaction")
	r.processed("d-after")
	if q, _ := r.request("d-after"); q.Messages >= before.Messages {
		t.Errorf("the turn after /compact sent %d messages, the last before it %d", q.Messages, before.Messages)
	}
	if got := r.Session().ID; got != sess.ID {
		t.Errorf("session changed from %s to %s across /compact", sess.ID, got)
	}
}

// 3. Cancel a slow turn: one Escape stops it (no hook fires), the message fails
// as cancelled, the composer is clean, the next message is processed, and the
// cancelled one was never closed by a turn end.
func TestCancelSlowTurn(t *testing.T) {
	r := newRig(t, "cc-cancel")
	r.Start()
	r.Send("c0", "before")
	r.processed("c0")

	r.Send("c1", "[standin:slow=30s] take your time")
	r.WaitState("c1", seat.StateSubmitted, 30*time.Second)
	r.WaitFor("the slow turn to show busy", 10*time.Second, func() bool {
		return claudecode.Adapter{}.Busy(r.Screen())
	})
	r.cursorAt("c0", seat.StateProcessed) // not moved by a turn in flight
	began := time.Now()
	if res := r.Run("seat", "cancel", r.Name); res.Code != 0 {
		t.Fatalf("seat cancel: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	t.Logf("cancel took %s", time.Since(began))
	st := r.Status("c1")
	if st.State != seat.StateFailed || st.Reason != seat.ReasonCancelled || st.TurnEnd != "" {
		t.Fatalf("c1 after cancel: %+v", st)
	}
	for _, ev := range append(r.Events(seat.EvStop), r.Events(seat.EvStopFailure)...) {
		if ev.Fields.PromptID == st.PromptID {
			t.Fatalf("a turn end arrived for the cancelled prompt: %+v", ev.Fields)
		}
	}
	if box, ok := claudecode.Composer(r.Screen()); !ok || box != "" {
		t.Fatalf("composer after cancel: %q (visible %v)\n%s\ndriver.log:\n%s", box, ok, r.Screen(), r.DriverLog())
	}
	if c := r.cursorAt("c1", seat.StateFailed); c.ClosedBy != seat.ReasonCancelled {
		t.Fatalf("the cursor passed c1 closed by %q, want the cancel (no turn end)", c.ClosedBy)
	}
	r.Send("c2", "after the cancel")
	r.processed("c2")
	r.cursorAt("c2", seat.StateProcessed)
	if n := r.turns()["c2"]; n != 1 {
		t.Fatalf("c2 reached the model %d times", n)
	}
}

// 4. SIGKILL the claude process: the driver relaunches it with --resume of the
// same session id and the full flag set, and the next turn carries the earlier
// conversation.
func TestKilledHarnessResumesTheSameSession(t *testing.T) {
	r := newRig(t, "cc-resume")
	r.Start()
	r.Send("k1", "remember this")
	r.processed("k1")
	before := r.Session()
	first, _ := r.request("k1")
	// Claude writes the conversation to its transcript in batches, up to ~150 ms
	// after the Stop hook: what a kill before that loses, no resume can carry
	// (TestKillRightAfterATurnDoesNotWedgeTheSeat). Kill once it is recorded.
	r.WaitFor("k1's turn in claude's transcript", 10*time.Second, func() bool {
		found, _, _ := r.findTurn("k1")
		return found
	})

	// The harness itself, under pantty's pane process (seat.ExecHarness), which
	// then exits by the same signal.
	harness, err := seat.HarnessPID(before.PanePID)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(harness, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("the harness relaunched", 60*time.Second, func() bool {
		s, err := r.Seat().ReadSession()
		return err == nil && s.Launches > before.Launches && s.PanePID != before.PanePID
	})
	r.Send("k2", "what did I say?")
	r.processed("k2")
	after := r.Session()
	if after.ID != before.ID || after.Generation != before.Generation || !after.Resumed {
		t.Fatalf("session before %+v, after %+v: want the same id and generation, resumed", before, after)
	}
	var lf seat.LaunchFile
	if err := seat.ReadState(r.Seat().LaunchPath(), &lf); err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(lf.Argv, " ")
	if !strings.Contains(argv, "--resume "+before.ID) || !strings.Contains(argv, "--settings "+r.Seat().SettingsPath()) ||
		strings.Contains(argv, "--session-id") {
		t.Fatalf("relaunch argv %q", argv)
	}
	resumed := false
	for _, ev := range r.Events(seat.EvSessionStart) {
		resumed = resumed || ev.Fields.Source == "resume" && ev.Fields.SessionID == before.ID
	}
	if !resumed {
		t.Fatal("no SessionStart with source resume for the seat's session")
	}
	second, _ := r.request("k2")
	if second.Messages <= first.Messages {
		t.Fatalf("the turn after the relaunch sent %d messages, the fresh session's first %d: history was not carried",
			second.Messages, first.Messages)
	}
	if n := r.turns(); n["k1"] != 1 || n["k2"] != 1 {
		t.Fatalf("model turns %v", n)
	}
}

// A SIGKILL right after a turn's Stop, before claude has written that turn to
// its transcript, can leave a transcript with no conversation in it, which
// claude accepts neither for --resume nor for --session-id. The seat must come
// back either way, on the same session id, and take the next message.
func TestKillRightAfterATurnDoesNotWedgeTheSeat(t *testing.T) {
	r := newRig(t, "cc-early")
	r.Start()
	r.Send("e1", "first turn of a fresh session")
	r.processed("e1")
	before := r.Session()
	// The pane process: the harness dies with it (PR_SET_PDEATHSIG).
	if err := syscall.Kill(before.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.Send("e2", "after the kill")
	r.processed("e2")
	after := r.Session()
	if after.ID != before.ID || after.Launches != before.Launches+1 {
		t.Fatalf("session before %+v, after %+v: want the same id and exactly one relaunch", before, after)
	}
	if n := r.turns(); n["e2"] != 1 {
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
	r.processed("q0")
	r.Send("q1", "[standin:429 reset=120s] limited")
	var st seat.Status
	r.WaitFor("q1 back in the queue as a provider refusal", 30*time.Second, func() bool {
		var err error
		st, err = r.Seat().ReadStatus("q1")
		return err == nil && st.State == seat.StateQueued && st.Reason == "provider-refusal"
	})
	if st.Attempts != 1 || !st.NotBefore.After(time.Now()) {
		t.Fatalf("q1 %+v: want one attempt and a wait in the future", st)
	}
	failures := r.Events(seat.EvStopFailure)
	if len(failures) != 1 || failures[0].Fields.Error != "rate_limit" ||
		!strings.Contains(failures[0].Fields.LastAssistantMessage, "429") {
		t.Fatalf("StopFailure events %+v", failures)
	}
	r.cursorAt("q0", seat.StateProcessed)
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
