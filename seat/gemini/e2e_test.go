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
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/gemini"
	"github.com/pantty/pantty/seat/gemini/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/standinkit"
)

// TestMain fails the package if a test leaves a tmux server, a driver or a
// gemini process behind.
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

type rig struct {
	*seattest.Harness
	api *standin.Server
}

func geminiBinary(t *testing.T) string {
	t.Helper()
	bin, err := gemini.CachedBinary()
	if err != nil {
		msg := fmt.Sprintf("%v; run scripts/test.sh (it installs Gemini CLI %s into the harness cache) or set %s",
			err, gemini.Version, gemini.BinaryEnv)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
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
	return &rig{Harness: h, api: api}
}

// turns counts, per pantty message id, the model turns whose new input
// carried its guard header: what reached "the model".
func (r *rig) turns() map[string]int {
	n := map[string]int{}
	for _, q := range r.api.Requests() {
		if id, _, _, ok := guard.MatchHeader(q.NewInput); ok && q.Kind == "turn" {
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
	r.WaitFinal(90*time.Second, ids...)
	for _, id := range ids {
		if st := r.Status(id); st.State != seat.StateProcessed {
			r.T.Fatalf("message %s: %s (%s: %s)\ndriver.log:\n%s\npane:\n%s", id, st.State, st.Reason, st.Detail, r.DriverLog(), r.Screen())
		}
	}
}

// 1. The board door on the real CLI: paste → BeforeAgent (UserPromptSubmit,
// bound by the guard header) → AfterAgent (Stop, bound by the prompt id) →
// processed, the cursor advanced, the session pantty chose; more in a row,
// each reaching the model exactly once; the context reading comes from the
// chat file's usage of the last request, the floor from the first.
func TestSubmitEvidenceTurnEndAndExactlyOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-once")
	r.Start()
	sess := r.Session()
	if sess.ID == "" {
		t.Fatal("no session id: pantty chooses it for Gemini CLI (--session-id)")
	}
	ids := []string{}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("m%02d", i)
		ids = append(ids, id)
		r.Send(id, fmt.Sprintf("message %d\nwith a second line", i))
	}
	r.processed(ids...)
	st := r.Status("m01")
	if st.SessionID != sess.ID || st.PromptID == "" || !strings.Contains(st.Evidence, seat.EvUserPromptSubmit) || !strings.Contains(st.TurnEnd, seat.EvStop) {
		t.Fatalf("m01 status %+v, session %+v: want UserPromptSubmit evidence and a Stop turn end on the seat's session", st, sess)
	}
	turns := r.turns()
	for _, id := range ids {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want exactly once (all: %v)", id, turns[id], turns)
		}
	}
	cfg, _ := r.Seat().LoadConfig()
	if ok, where, err := (gemini.Adapter{}).FindTurn(r.Seat(), cfg, sess.ID, "m01", st.Nonce); !ok || err != nil {
		t.Fatalf("FindTurn(m01) in the chat file: %v %q %v", ok, where, err)
	}
	if ok, _, _ := (gemini.Adapter{}).FindPrompt(r.Seat(), cfg, sess.ID, "m01", "ffffffffffff"); ok {
		t.Fatal("FindPrompt matched another paste's nonce")
	}
	first, _ := r.request("m01")
	last, _ := r.request("m04")
	r.WaitFor("a context reading of the last turn", 10*time.Second, func() bool {
		c, err := r.Seat().ReadContext()
		return err == nil && c.Occupancy == last.Usage.PromptTokenCount
	})
	c, _ := r.Seat().ReadContext()
	if c.SessionID != sess.ID || c.Floor != first.Usage.PromptTokenCount || c.Reclaimable != last.Usage.PromptTokenCount-first.Usage.PromptTokenCount ||
		c.Window != gemini.Window {
		t.Fatalf("context.toml %+v: want occupancy %d, floor %d (the first request), window %d", c, last.Usage.PromptTokenCount, first.Usage.PromptTokenCount, gemini.Window)
	}
}

// 2. The dispatch corpus through the board door: slash commands, a shell
// escape, a mention and a lone slash reach the model as text (the guard owns
// the first character). The control is the command door: `seat command --
// /compress` does compress.
func TestBoardDoorDoesNotDispatchCommandDoorDoes(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-dispatch")
	r.Start()
	bang := r.Work + "/dispatched-by-bang"
	corpus := map[string]string{
		"d-compress": "/compress",
		"d-clear":    "/clear",
		"d-bang":     "!touch " + bang,
		"d-slash":    "/",
	}
	ids := []string{"d-bang", "d-clear", "d-compress", "d-slash"}
	for _, id := range ids {
		r.Send(id, corpus[id])
	}
	r.processed(ids...)
	for id, text := range corpus {
		q, ok := r.request(id)
		if !ok || !strings.Contains(q.NewInput, "\n"+text) {
			t.Errorf("%s: the model did not receive %q as text (request %+v)", id, text, q)
		}
	}
	if _, err := os.Stat(bang); err == nil {
		t.Errorf("%q ran a shell command", corpus["d-bang"])
	}
	for _, q := range r.api.Requests() {
		if q.Kind == "compress" {
			t.Errorf("a board text compressed the seat: %+v", q)
		}
	}
	if n := len(r.Events(seat.EvPreCompact)); n != 0 {
		t.Errorf("%d PreCompact events from board texts", n)
	}
	if res := r.Run("seat", "command", r.Name, "--", "/compact"); res.Code != 0 {
		t.Fatalf("seat command /compact: %s\n%s", res, r.DriverLog())
	}
	r.WaitFor("the compression (summary request and the recorded PostCompact)", 60*time.Second, func() bool {
		compressed := false
		for _, q := range r.api.Requests() {
			compressed = compressed || q.Kind == "compress" && q.Status == 200
		}
		return compressed && len(r.Events(seat.EvPostCompact)) == 1
	})
	if pre := r.Events(seat.EvPreCompact); len(pre) != 1 || pre[0].Fields.Trigger != "manual" {
		t.Fatalf("PreCompact events %+v", pre)
	}
}

// 3. Cancel a slow turn: one Escape stops it ("Request cancelled."; Gemini
// then fires AfterAgent with the partial reply), the message fails as
// cancelled, the box is empty, and the next message is processed alone.
func TestCancelSlowTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-cancel")
	r.Start()
	r.Send("c1", standinkit.SlowMarker(30*time.Second)+" take your time")
	r.WaitState("c1", seat.StateSubmitted, 60*time.Second)
	r.WaitFor("the slow reply to stream", 20*time.Second, func() bool {
		_, ok := r.request("c1")
		return ok && gemini.Adapter{}.Busy(r.Screen())
	})
	if res := r.Run("seat", "cancel", r.Name); res.Code != 0 {
		t.Fatalf("seat cancel: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	if st := r.Status("c1"); st.State != seat.StateFailed || st.Reason != seat.ReasonCancelled {
		t.Fatalf("c1 after cancel: %+v", st)
	}
	if box, ok := (gemini.Adapter{}).Composer(r.Screen()); !ok || box != "" {
		t.Fatalf("composer after cancel: %q (visible %v)\n%s", box, ok, r.Screen())
	}
	r.Send("c2", "after the cancel")
	r.processed("c2")
	if n := r.turns()["c2"]; n != 1 {
		t.Fatalf("c2 reached the model %d times", n)
	}
}

// 4. SIGKILL the gemini process: the driver relaunches `gemini --resume ID`
// on the same session, and the next turn carries the earlier conversation.
func TestKilledHarnessResumesTheSameSession(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-resume")
	r.Start()
	r.Send("k1", "remember this")
	r.processed("k1")
	before := r.Session()
	first, _ := r.request("k1")
	harness, err := seat.HarnessPID(before.PanePID)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(harness, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("the harness relaunched", 90*time.Second, func() bool {
		s, err := r.Seat().ReadSession()
		return err == nil && s.Launches > before.Launches && s.PanePID != before.PanePID
	})
	r.Send("k2", "what did I say?")
	r.processed("k2")
	after := r.Session()
	if after.ID != before.ID || after.Generation != before.Generation || !after.Resumed {
		t.Fatalf("session before %+v, after %+v: want the same session and generation, resumed", before, after)
	}
	var lf seat.LaunchFile
	if err := seat.ReadState(r.Seat().LaunchPath(), &lf); err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(lf.Argv, " "); !strings.Contains(argv, " --resume "+before.ID) {
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
	if second.Contents <= first.Contents {
		t.Fatalf("the turn after the relaunch carried %d contents (the first turn %d): history was not carried", second.Contents, first.Contents)
	}
	if n := r.turns(); n["k1"] != 1 || n["k2"] != 1 {
		t.Fatalf("model turns %v", n)
	}
}

// 5. The compaction cycle: pantty materializes the handoff, sends /compact
// (Gemini's alias of /compress) through the command door (PreCompress fires;
// the end is read from the chat file, Gemini has no hook for it), and the
// handoff reaches the first request after the compression through the
// BeforeAgent hook's additionalContext, recorded as SessionStart(compact).
func TestCompactionCycleReinjectsIntoTheNextRequest(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-compact")
	r.Start()
	r.Send("p1", "first piece of work")
	r.processed("p1")
	if res := r.Run("handoff", "note", "--seat", r.Name, "always run the linter before the tests"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	if res := r.Run("seat", "compact", r.Name); res.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", res, r.DriverLog())
	}
	cyc, err := r.Seat().ReadCycle()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.Hash == "" {
		t.Fatalf("cycle record: %+v %v", cyc, err)
	}
	r.Send("p2", "second piece of work")
	r.processed("p2")
	var next standin.Request
	compressed := false
	for _, q := range r.api.Requests() {
		compressed = compressed || q.Kind == "compress"
		if compressed && q.Kind == "turn" {
			next = q
			break
		}
	}
	if id, _, _, _ := guard.MatchHeader(next.NewInput); id != "p2" {
		t.Fatalf("the first turn after the compression carried %q, want p2 (requests %+v)", id, r.api.Requests())
	}
	if c := next.Context; !strings.Contains(c, "always run the linter before the tests") || !strings.Contains(c, "pantty handoff for seat "+r.Name) {
		t.Fatalf("the first request after the compression did not carry the handoff: context=%q", c)
	}
	r.WaitFor("the injection recorded in the cycle", 10*time.Second, func() bool {
		c, err := r.Seat().ReadCycle()
		return err == nil && c.Injected != "" && c.InjectedHash == c.Hash && c.Error == ""
	})
	var starts int
	for _, ev := range r.Events(seat.EvSessionStart) {
		if ev.Fields.Source == "compact" {
			starts++
		}
	}
	if starts != 1 {
		t.Fatalf("%d SessionStart(compact) events, want 1", starts)
	}
}
