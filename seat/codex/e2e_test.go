package codex_test

// End-to-end tests against the REAL Codex CLI in a private tmux server, pointed
// at the loopback Responses-API stand-in through the seat's own CODEX_HOME. They
// need the binary that scripts/test.sh installs (or PANTTY_CODEX_BIN); without
// it they skip, except under CI, where a missing harness is a failure.

import (
	"fmt"
	"github.com/pantty/pantty/internal/guard"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/codex"
	"github.com/pantty/pantty/seat/codex/standin"
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
	*seattest.Harness
	api *standin.Server
}

func codexBinary(t *testing.T) string {
	t.Helper()
	bin, err := codex.CachedBinary()
	if err != nil {
		msg := fmt.Sprintf("%v; run scripts/test.sh (it installs Codex CLI %s into the harness cache) or set %s",
			err, codex.Version, codex.BinaryEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

func newRig(t *testing.T, name string, toml ...string) *rig {
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

func (r *rig) processed(ids ...string) {
	r.T.Helper()
	r.WaitFinal(60*time.Second, ids...)
	for _, id := range ids {
		if st := r.Status(id); st.State != seat.StateProcessed {
			r.T.Fatalf("message %s: %s (%s: %s)\ndriver.log:\n%s", id, st.State, st.Reason, st.Detail, r.DriverLog())
		}
	}
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

// 1. The board door on the real binary: paste → UserPromptSubmit (hook) bound by
// the guard header → Stop bound by turn id and thread id → processed, the cursor
// advanced, the thread id recorded from that first bound turn end; then more in
// a row, each reaching the model exactly once; the context reading comes from
// the request's own usage, with the floor from the first request.
func TestSubmitEvidenceTurnEndAndExactlyOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-once")
	r.Start()
	if s := r.Session(); s.ID != "" {
		t.Fatalf("session id %q before any turn: Codex names its thread, pantty records it from the first bound turn end", s.ID)
	}
	r.Send("m01", "first message")
	r.processed("m01")
	sess := r.Session()
	st := r.Status("m01")
	if sess.ID == "" || st.SessionID != sess.ID || st.PromptID == "" ||
		!strings.Contains(st.Evidence, seat.EvUserPromptSubmit) || !strings.Contains(st.TurnEnd, seat.EvStop) {
		t.Fatalf("m01 status %+v, session %+v: want UserPromptSubmit evidence, a Stop turn end, the thread recorded", st, sess)
	}
	if q, _ := r.request("m01"); q.Thread != sess.ID {
		t.Fatalf("the model request ran on thread %q, session.toml says %q", q.Thread, sess.ID)
	}
	r.cursorAt("m01", seat.StateProcessed)
	cfg, _ := r.Seat().LoadConfig()
	if ok, where, err := (codex.Adapter{}).FindPrompt(r.Seat(), cfg, sess.ID, "m01", st.Nonce); !ok || err != nil {
		t.Fatalf("FindPrompt(m01) in the rollout: %v %q %v", ok, where, err)
	}
	if ok, _, _ := (codex.Adapter{}).FindPrompt(r.Seat(), cfg, sess.ID, "m01", "ffffffffffff"); ok {
		t.Fatal("FindPrompt matched another paste's nonce")
	}
	ids := []string{"m01"}
	for i := 2; i <= 6; i++ {
		id := fmt.Sprintf("m%02d", i)
		ids = append(ids, id)
		r.Send(id, fmt.Sprintf("message %d\nwith a second line", i))
	}
	r.processed(ids...)
	turns := r.turns()
	for _, id := range ids {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want exactly once (all: %v)", id, turns[id], turns)
		}
	}
	if c := r.cursorAt("m06", seat.StateProcessed); c.Closed != 6 {
		t.Fatalf("cursor closed %d messages, want 6", c.Closed)
	}
	var first, last standin.Request
	first, _ = r.request("m01")
	last, _ = r.request("m06")
	r.WaitFor("a context reading of the last turn", 10*time.Second, func() bool {
		c, err := r.Seat().ReadContext()
		return err == nil && c.Occupancy == last.Usage.InputTokens
	})
	c, _ := r.Seat().ReadContext()
	if c.SessionID != sess.ID || c.Floor != first.Usage.InputTokens || c.Reclaimable != last.Usage.InputTokens-first.Usage.InputTokens ||
		c.Window <= 0 || !strings.Contains(c.Source, "PostModelRequest") {
		t.Fatalf("context.toml %+v: want occupancy %d, floor %d (the first request), window > 0", c, last.Usage.InputTokens, first.Usage.InputTokens)
	}
}

// 2. The dispatch corpus through the board door on the real binary: slash
// commands, shell escapes, a leading space and a lone slash reach the model as
// text (the guard owns the first character). The control is the command door:
// `seat command -- /compact` does compact.
func TestBoardDoorDoesNotDispatchCommandDoorDoes(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-dispatch")
	r.Start()
	bang := filepath.Join(r.Work, "dispatched-by-bang")
	corpus := map[string]string{
		"d-compact": "/compact",
		"d-new":     "/new",
		"d-bang":    "!touch " + bang,
		"d-space":   " /compact",
		"d-slash":   "/",
	}
	ids := []string{"d-bang", "d-compact", "d-new", "d-slash", "d-space"}
	for _, id := range ids {
		r.Send(id, corpus[id])
	}
	r.processed(ids...)
	sess := r.Session()
	for id, text := range corpus {
		q, ok := r.request(id)
		if !ok || !strings.Contains(q.NewInput, "\n"+text+"\n") {
			t.Errorf("%s: the model did not receive %q as text (request %+v)", id, text, q)
		}
	}
	if _, err := os.Stat(bang); err == nil {
		t.Errorf("%q ran a shell command", corpus["d-bang"])
	}
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			t.Errorf("a board text compacted the seat: %+v", q)
		}
		if q.Kind == "turn" && q.Thread != sess.ID {
			t.Errorf("a turn ran on thread %s, not the seat's %s (a /new ran?)", q.Thread, sess.ID)
		}
	}
	if n := len(r.Events(seat.EvPreCompact)); n != 0 {
		t.Errorf("%d PreCompact events from board texts", n)
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
}

// 3. Cancel a slow turn: one Escape stops it (the footer's run state goes back
// to Ready, the Interrupt hook fires, no Stop), the message fails as cancelled,
// the box is empty, and the next message is processed.
func TestCancelSlowTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-cancel")
	r.Start()
	r.Send("c0", "before")
	r.processed("c0")
	r.Send("c1", "[standin:slow=30s] take your time")
	r.WaitState("c1", seat.StateSubmitted, 30*time.Second)
	r.WaitFor("the slow reply to stream", 10*time.Second, func() bool {
		for _, q := range r.api.Requests() {
			if id, _, _, ok := guard.MatchHeader(q.NewInput); ok && id == "c1" {
				return codex.Adapter{}.Busy(r.Screen())
			}
		}
		return false
	})
	began := time.Now()
	if res := r.Run("seat", "cancel", r.Name); res.Code != 0 {
		t.Fatalf("seat cancel: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	t.Logf("cancel took %s", time.Since(began))
	st := r.Status("c1")
	if st.State != seat.StateFailed || st.Reason != seat.ReasonCancelled || st.TurnEnd != "" {
		t.Fatalf("c1 after cancel: %+v", st)
	}
	for _, ev := range r.Events(seat.EvStop) {
		if ev.Fields.PromptID == st.PromptID {
			t.Fatalf("a Stop arrived for the cancelled turn: %+v", ev.Fields)
		}
	}
	r.WaitFor("the Interrupt hook of the cancelled turn", 10*time.Second, func() bool {
		for _, ev := range r.Events("Interrupt") {
			if ev.Fields.PromptID == st.PromptID {
				return true
			}
		}
		return false
	})
	if box, ok := (codex.Adapter{}).Composer(r.Screen()); !ok || box != "" {
		t.Fatalf("composer after cancel: %q (visible %v)\n%s", box, ok, r.Screen())
	}
	r.Send("c2", "after the cancel")
	r.processed("c2")
	r.cursorAt("c2", seat.StateProcessed)
	if n := r.turns()["c2"]; n != 1 {
		t.Fatalf("c2 reached the model %d times", n)
	}
}

// 4. SIGKILL the codex process: the driver relaunches `codex resume <thread>`
// on the same thread, and the next turn carries the earlier conversation.
func TestKilledHarnessResumesTheSameThread(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-resume")
	r.Start()
	r.Send("k1", "remember this")
	r.processed("k1")
	before := r.Session()
	first, _ := r.request("k1")
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
		t.Fatalf("session before %+v, after %+v: want the same thread and generation, resumed", before, after)
	}
	var lf seat.LaunchFile
	if err := seat.ReadState(r.Seat().LaunchPath(), &lf); err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(lf.Argv, " "); !strings.Contains(argv, " resume "+before.ID+" --no-daemon") {
		t.Fatalf("relaunch argv %q", argv)
	}
	resumed := false
	for _, ev := range r.Events(seat.EvSessionStart) {
		resumed = resumed || ev.Fields.Source == "resume" && ev.Fields.SessionID == before.ID
	}
	if !resumed {
		t.Fatal("no SessionStart with source resume for the seat's thread")
	}
	second, _ := r.request("k2")
	if second.Thread != before.ID || second.Messages <= first.Messages {
		t.Fatalf("the turn after the relaunch: thread %s, %d messages (the first turn had %d): history was not carried",
			second.Thread, second.Messages, first.Messages)
	}
	if n := r.turns(); n["k1"] != 1 || n["k2"] != 1 {
		t.Fatalf("model turns %v", n)
	}
}

// 5. The compaction cycle: pantty materializes the handoff and verifies it
// changed, sends /compact through the command door (PreCompact and PostCompact
// fire), and the handoff reaches the first request after the compaction,
// through SessionStart source compact, which Codex runs with the next turn.
func TestCompactionCycleReinjectsIntoTheNextRequest(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-compact")
	r.Start()
	r.Send("p1", "first piece of work")
	r.processed("p1")
	if res := r.Run("handoff", "note", "--seat", r.Name, "always run the linter before the tests"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	res := r.Run("seat", "compact", r.Name)
	if res.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", res, r.DriverLog())
	}
	cyc, err := r.Seat().ReadCycle()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.Hash == "" {
		t.Fatalf("cycle record: %+v %v", cyc, err)
	}
	r.Send("p2", "second piece of work")
	r.processed("p2")
	_, next, ok := r.compaction()
	if !ok {
		t.Fatalf("no compaction, or no turn after it: %+v", r.api.Requests())
	}
	if id, _, _, _ := guard.MatchHeader(next.NewInput); id != "p2" {
		t.Fatalf("the first turn after the compaction carried %q, want p2", id)
	}
	if c := next.Context; !strings.Contains(c, "always run the linter before the tests") || !strings.Contains(c, "pantty handoff for seat "+r.Name) {
		t.Fatalf("the first request after the compaction did not carry the handoff: context=%q", c)
	}
	r.WaitFor("the injection recorded in the cycle", 10*time.Second, func() bool {
		c, err := r.Seat().ReadCycle()
		return err == nil && c.Injected != "" && c.InjectedHash == c.Hash && c.Error == ""
	})
	starts := 0
	for _, ev := range r.Events(seat.EvSessionStart) {
		if ev.Fields.Source == "compact" {
			starts++
		}
	}
	if starts != 1 {
		t.Fatalf("%d SessionStart(compact) events, want 1", starts)
	}
}
