package seattest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/proc"
)

// E2E is the end-to-end suite every real harness passes, written once: an
// adapter's test package fills in how to make its rig and what differs in
// its harness, and calls Run. The suite drives the real binary in a private
// tmux server against the harness's loopback model-API stand-in, and counts
// what reached "the model" from the stand-in's own log.
type E2E struct {
	// Adapter is the harness under test.
	Adapter harness.Adapter
	// Prefix names the suite's seats ("cx" → cx-once, cx-dispatch, …).
	Prefix string
	// New makes one test's seat and its stand-in (toml: extra seat.toml lines).
	New func(t *testing.T, name string, toml ...string) *E2ERig
	// Serial runs the tests one at a time (Claude Code: a cancelled slow turn's
	// late reply was once taken for the next message's under parallel load).
	Serial bool
	// Messages is how many messages the exactly-once test sends in a row.
	Messages int
	// Corpus is the board texts that must reach the model as text (id → text);
	// "{bang}" in a text stands for a file path a shell escape would create.
	Corpus map[string]string
	// AsReceived is how the harness passes a corpus text on to the model
	// (nil: unchanged). Gemini CLI escapes a pasted @ as \@ (its
	// ui.escapePastedAtSymbols, which pantty sets).
	AsReceived func(text string) string
	// Workspace files (paths relative to it) are written into the seat's workdir before the corpus
	// is sent; their content must reach the model through no request (only a
	// mention expanded from board text would carry it).
	Workspace map[string]string
	// CompactKind is the stand-in's kind of a compaction's summary request.
	CompactKind string
	// ContextSource, when set, is a word of context.toml's source: the
	// exactly-once test then checks the reading against the stand-in's usage
	// (occupancy = the last request's input, floor = the first's).
	ContextSource string
	// ResumeArgv checks the relaunch's argv for the session (an error says why not).
	ResumeArgv func(h *Harness, sessionID, argv string) error
	// BeforeKill waits, if the harness needs it, until the turn is recorded
	// where a resume reads it.
	BeforeKill func(r *E2ERig, id string)
	// AfterCancel checks what the harness itself did on the cancel.
	AfterCancel func(r *E2ERig, st inbox.Status)
	// Cycle: the compaction-cycle test runs (the handoff reaches the first
	// request after the compaction).
	Cycle bool
	// Cron makes a seat set up the way a person's docs tell them to
	// (CronSeat; toml: extra seat.toml lines), for the revival-under-cron
	// and cannot-start tests; nil skips them.
	Cron func(t *testing.T, name string, toml ...string) (*E2ERig, CronSeat)
	// BadArg is an argument the harness refuses at launch, and BadWords
	// what it says then (the cannot-start test).
	BadArg, BadWords string
	// BadTOML, when set, replaces BadArg's `args = [BadArg]`: the seat.toml
	// lines of a launch the harness refuses (a path with no args, such as
	// Codex's app server, whose seat.toml refuses them at load).
	BadTOML []string
	// Submitted checks a processed message's submit evidence; nil: the
	// UserPromptSubmit hook's, bound by the guard header. A path with a
	// witness of its own (Codex's app server answers turn/start with the
	// turn) checks that one, and that the hook's event bound the turn all
	// the same.
	Submitted func(r *E2ERig, st inbox.Status) error
	// PaneAfterFirstTurn: the seat's pane opens only after its session's
	// first turn (Codex's app-server path, where the pane is a viewer of
	// the harness's thread, which its TUI cannot resume before a turn): the
	// first-screen check reads the pane once that turn is over, and a
	// test waits for the pane before it reads it.
	PaneAfterFirstTurn bool
	// Outages are the faults of the stand-in the suite plays, one test each.
	Outages []E2EOutage
}

// E2EOutage is one fault of the stand-in played against the real harness
// (PlayOutage): three messages queued, none failed, the seat names the
// outage in the harness's words, all processed once after the fault clears.
type E2EOutage struct {
	Name  string // the test's name
	Fault standinkit.Fault
	// Class is the fault class the seat must report (machine.ClassMeans, …)
	// and Words a piece of the harness's own words it must report it in.
	Class machine.Class
	Words string
}

// E2ERig is one test's seat, the stand-in's log read as E2ERequests, and
// its fault switch.
type E2ERig struct {
	*Harness
	Requests func() []E2ERequest
	Faults   FaultyAPI
}

// StandinRig is the rig of seat h and its stand-in api, whose log rows
// returns: every stand-in's log reads as E2ERequests the same way.
func StandinRig[R standinkit.Logged](h *Harness, api FaultyAPI, rows func() []R) *E2ERig {
	return &E2ERig{Harness: h, Faults: api, Requests: func() []E2ERequest {
		var out []E2ERequest
		for _, q := range rows() {
			c, n := q.Common(), q.Counts()
			out = append(out, E2ERequest{Kind: c.Kind, NewInput: c.NewInput, Context: c.Context, Status: c.Status,
				Session: n.Session, History: n.History, Input: n.Input})
		}
		return out
	}}
}

// E2ERequest is one request at a stand-in, in the suite's terms.
type E2ERequest struct {
	Kind     string // "turn", the compaction's kind (E2E.CompactKind), …
	NewInput string // the new user input (where the guard header is)
	Context  string // the rest of that input (hook output, injected context)
	Session  string // the session the request names, "" when its API names none
	History  int    // messages or contents sent: more than the first turn's means history was carried
	Input    int    // the input tokens the stand-in reported for it
	Status   int    // the HTTP status answered
}

// Run runs the suite.
func (s E2E) Run(t *testing.T) {
	type test struct {
		name string
		run  func(*testing.T)
	}
	tests := []test{
		{"SubmitEvidenceTurnEndAndExactlyOnce", s.exactlyOnce},
		{"BoardDoorDoesNotDispatchCommandDoorDoes", s.dispatch},
		{"CancelSlowTurn", s.cancel},
		{"KilledHarnessResumesTheSameSession", s.resume},
	}
	if s.Cycle {
		tests = append(tests, test{"CompactionCycleReinjectsIntoTheNextRequest", s.cycle})
	}
	if s.Cron != nil {
		tests = append(tests, test{"RevivalUnderCronKeepsTheSeatWorking", s.cron},
			test{"HarnessThatCannotStartAnswersFastInItsWords", s.cannotStart})
	}
	for _, o := range s.Outages {
		tests = append(tests, test{"Outage/" + o.Name, func(t *testing.T) {
			r := s.New(t, s.Prefix+"-"+strings.ToLower(o.Name), OutageTOML...)
			r.PlayOutage(r.Faults, r.Answered, o.Fault, o.Class, o.Words)
		}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !s.Serial {
				t.Parallel()
			}
			tc.run(t)
		})
	}
}

// Turns counts, per pantty message id, the model turns whose new input
// carried its guard header: what reached the model, not what pantty recorded.
func (r *E2ERig) Turns() map[string]int {
	n := map[string]int{}
	for _, q := range r.Requests() {
		if id, _, _, ok := guard.MatchHeader(q.NewInput); ok && q.Kind == "turn" {
			n[id]++
		}
	}
	return n
}

// Request returns the last turn request that carried message id.
func (r *E2ERig) Request(id string) (E2ERequest, bool) {
	var out E2ERequest
	found := false
	for _, q := range r.Requests() {
		if got, _, _, ok := guard.MatchHeader(q.NewInput); ok && got == id && q.Kind == "turn" {
			out, found = q, true
		}
	}
	return out, found
}

// Processed waits for ids to be final and fails unless each was processed.
func (r *E2ERig) Processed(ids ...string) {
	r.T.Helper()
	r.WaitFinal(90*time.Second, ids...)
	for _, id := range ids {
		if st := r.Status(id); st.State != inbox.StateProcessed {
			r.T.Fatalf("message %s: %s (%s: %s)\ndriver.log:\n%s\npane:\n%s", id, st.State, st.Reason, st.Detail, r.DriverLog(), r.screenNote())
		}
	}
}

// CursorAt waits briefly for cursor.toml to stand at id in state: the driver
// writes a message's final status first and the cursor right after it.
func (r *E2ERig) CursorAt(id, state string) inbox.Cursor {
	r.T.Helper()
	var c inbox.Cursor
	r.WaitFor(fmt.Sprintf("the cursor at %s (%s)", id, state), 5*time.Second, func() bool {
		var err error
		c, err = r.Seat().CursorFile().Read()
		return err == nil && c.ID == id && c.State == state
	})
	return c
}

// 1. The board door: paste → UserPromptSubmit evidence bound by the guard
// header → a Stop bound by prompt id and session → processed, the cursor
// advanced; more in a row, each reaching the model exactly once; the harness
// finds the turn in its own record; the context reading matches the
// stand-in's usage.
func (s E2E) exactlyOnce(t *testing.T) {
	r := s.New(t, s.Prefix+"-once")
	r.Start()
	if !s.PaneAfterFirstTurn {
		s.firstScreen(r)
	}
	r.Send("m01", "first message")
	r.Processed("m01")
	if s.PaneAfterFirstTurn {
		s.firstScreen(r)
	}
	sess := r.Session()
	st := r.Status("m01")
	if sess.ID == "" || st.PromptID == "" || st.SessionID != sess.ID || !strings.Contains(st.TurnEnd, hookwire.EvStop) {
		t.Fatalf("m01 status %+v, session %+v: want a Stop turn end, the seat's session", st, sess)
	}
	if err := s.submitted(r, st); err != nil {
		t.Fatalf("m01's submit evidence: %v (status %+v)", err, st)
	}
	for _, ev := range r.Events(hookwire.EvStop) {
		if ev.File == st.TurnEnd && (ev.Fields.PromptID != st.PromptID || ev.Fields.SessionID != sess.ID ||
			!strings.Contains(ev.Fields.LastAssistantMessage, "msg=m01 nonce="+st.Nonce)) {
			t.Fatalf("the Stop that closed m01: %+v", ev.Fields)
		}
	}
	if q, _ := r.Request("m01"); q.Session != "" && q.Session != sess.ID {
		t.Fatalf("the model request ran on session %q, session.toml says %q", q.Session, sess.ID)
	}
	r.CursorAt("m01", inbox.StateProcessed)
	cfg, _ := r.Seat().LoadConfig()
	// A harness may write its record of the turn a little after the turn's end
	// (Claude Code in batches, up to ~150 ms after Stop).
	r.WaitFor("m01's turn in the harness's own record (FindTurn)", 10*time.Second, func() bool {
		ok, _, err := s.Adapter.FindTurn(r.Seat(), cfg, sess.ID, "m01", st.Nonce)
		return ok && err == nil
	})
	if find := s.Adapter.Caps().FindPrompt; find != nil {
		if ok, _, _ := find(r.Seat(), cfg, sess.ID, "m01", "ffffffffffff"); ok {
			t.Fatal("FindPrompt matched another paste's nonce")
		}
	}
	ids := []string{"m01"}
	for i := 2; i <= s.Messages; i++ {
		id := fmt.Sprintf("m%02d", i)
		ids = append(ids, id)
		r.Send(id, fmt.Sprintf("message %d of %d\nwith a second line", i, s.Messages))
	}
	r.Processed(ids...)
	turns := r.Turns()
	for _, id := range ids {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want exactly once (all: %v)", id, turns[id], turns)
		}
		if err := s.submitted(r, r.Status(id)); err != nil {
			t.Errorf("message %s's submit evidence: %v", id, err)
		}
	}
	last := ids[len(ids)-1]
	if c := r.CursorAt(last, inbox.StateProcessed); c.Closed != s.Messages {
		t.Fatalf("cursor closed %d messages, want %d", c.Closed, s.Messages)
	}
	if s.ContextSource == "" {
		return
	}
	first, _ := r.Request("m01")
	end, _ := r.Request(last)
	r.WaitFor("a context reading of the last turn", 10*time.Second, func() bool {
		c, err := r.Seat().ContextFile().Read()
		return err == nil && c.Occupancy == end.Input
	})
	c, _ := r.Seat().ContextFile().Read()
	if c.SessionID != sess.ID || c.Floor != first.Input || c.Reclaimable != end.Input-first.Input || c.Window <= 0 ||
		!strings.Contains(c.Source, s.ContextSource) {
		t.Fatalf("context.toml %+v: want occupancy %d, floor %d (the first request), a window, source %q", c, end.Input, first.Input, s.ContextSource)
	}
}

// 2. The dispatch corpus through the board door reaches the model as text
// (the guard owns the first character), no shell escape runs, nothing
// compacts, the session stays. The control is the command door: `seat
// command -- /compact` does compact.
func (s E2E) dispatch(t *testing.T) {
	r := s.New(t, s.Prefix+"-dispatch")
	for name, content := range s.Workspace {
		path := filepath.Join(r.Work, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r.Start()
	bang := filepath.Join(r.Work, "dispatched-by-bang")
	var ids []string
	corpus := map[string]string{}
	for id, text := range s.Corpus {
		corpus[id] = strings.ReplaceAll(text, "{bang}", bang)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r.Send(id, corpus[id])
	}
	r.Processed(ids...)
	sess := r.Session() // after a turn: a harness that names its own session has one now
	for id, text := range corpus {
		if s.AsReceived != nil {
			text = s.AsReceived(text)
		}
		q, ok := r.Request(id)
		if !ok || !strings.Contains(q.NewInput, "\n"+text+"\n") {
			t.Errorf("%s: the model did not receive %q as text (request %+v)", id, text, q)
		}
	}
	if _, err := os.Stat(bang); err == nil {
		t.Errorf("a board text ran a shell command (%s exists)", bang)
	}
	var before E2ERequest
	for _, q := range r.Requests() {
		for name, content := range s.Workspace {
			if strings.Contains(q.NewInput+q.Context, content) {
				t.Errorf("%s's content reached the model (a mention in board text was expanded): %+v", name, q)
			}
		}
		if q.Kind == s.CompactKind {
			t.Errorf("a board text compacted the seat: %+v", q)
		}
		if q.Kind == "turn" {
			before = q
			if q.Session != "" && q.Session != sess.ID {
				t.Errorf("a turn ran on session %s, not the seat's %s", q.Session, sess.ID)
			}
		}
	}
	if n := len(r.Events(hookwire.EvPreCompact)); n != 0 {
		t.Errorf("%d PreCompact events from board texts", n)
	}
	for _, ev := range r.Events(hookwire.EvSessionStart) {
		if ev.Fields.Source == "clear" {
			t.Errorf("SessionStart %+v: a /clear ran", ev.Fields)
		}
	}
	if res := r.Run("seat", "command", r.Name, "--", "/compact"); res.Code != 0 {
		t.Fatalf("seat command /compact: %s\n%s", res, r.DriverLog())
	}
	r.WaitFor("the compaction (its summary request and PostCompact)", 60*time.Second, func() bool {
		compacted := false
		for _, q := range r.Requests() {
			compacted = compacted || q.Kind == s.CompactKind && q.Status == 200
		}
		return compacted && len(r.Events(hookwire.EvPostCompact)) == 1
	})
	if pre := r.Events(hookwire.EvPreCompact); len(pre) != 1 || pre[0].Fields.Trigger != "manual" {
		t.Fatalf("PreCompact events %+v", pre)
	}
	// Still the same session, still taking messages, and the history replaced:
	// the next turn sends less than the last one before the compaction.
	r.Send("d-after", "after the compaction")
	r.Processed("d-after")
	if q, _ := r.Request("d-after"); q.History >= before.History {
		t.Errorf("the turn after /compact sent %d messages, the last before it %d", q.History, before.History)
	}
	if got := r.Session().ID; got != sess.ID {
		t.Errorf("session changed from %s to %s", sess.ID, got)
	}
}

// 3. Cancel a slow turn: one Escape stops it, the message fails as cancelled
// with no turn end of its own, the input box is clean, the cursor passes it
// closed by the cancel, and the next message is processed alone.
func (s E2E) cancel(t *testing.T) {
	r := s.New(t, s.Prefix+"-cancel")
	r.Start()
	r.Send("c0", "before")
	r.Processed("c0")
	if s.PaneAfterFirstTurn {
		r.WaitPane()
	}
	r.Send("c1", standinkit.SlowMarker(30*time.Second)+" take your time")
	r.WaitState("c1", inbox.StateSubmitted, 60*time.Second)
	r.WaitFor("the slow reply to stream", 20*time.Second, func() bool {
		_, ok := r.Request("c1")
		return ok && s.Adapter.Busy(r.Screen())
	})
	began := time.Now()
	if res := r.Run("seat", "cancel", r.Name); res.Code != 0 {
		t.Fatalf("seat cancel: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	t.Logf("cancel took %s", time.Since(began))
	st := r.Status("c1")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled || st.TurnEnd != "" {
		t.Fatalf("c1 after cancel: %+v", st)
	}
	if composer := s.Adapter.Caps().Composer; composer != nil {
		if box, ok := composer(r.Screen()); !ok || box != "" {
			t.Fatalf("composer after cancel: %q (visible %v)\n%s\ndriver.log:\n%s", box, ok, r.Screen(), r.DriverLog())
		}
	}
	if c := r.CursorAt("c1", inbox.StateFailed); c.ClosedBy != inbox.ReasonCancelled {
		t.Fatalf("the cursor passed c1 closed by %q, want the cancel", c.ClosedBy)
	}
	if s.AfterCancel != nil {
		s.AfterCancel(r, st)
	}
	r.Send("c2", "after the cancel")
	r.Processed("c2")
	r.CursorAt("c2", inbox.StateProcessed)
	if n := r.Turns()["c2"]; n != 1 {
		t.Fatalf("c2 reached the model %d times", n)
	}
}

// 4. SIGKILL the harness: the driver relaunches it resuming the same session,
// SessionStart says resume, and the next turn carries the earlier
// conversation.
func (s E2E) resume(t *testing.T) {
	r := s.New(t, s.Prefix+"-resume")
	r.Start()
	r.Send("k1", "remember this")
	r.Processed("k1")
	before := r.Session()
	first, _ := r.Request("k1")
	if s.BeforeKill != nil {
		s.BeforeKill(r, "k1")
	}
	// The harness itself, under pantty's pane process (paneexec.Run),
	// which then exits by the same signal.
	harness, err := proc.HarnessPID(before.PanePID)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(harness, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("the harness relaunched", 90*time.Second, func() bool {
		s, err := r.Seat().SessionFile().Read()
		return err == nil && s.Launches > before.Launches && s.PanePID != before.PanePID
	})
	r.Send("k2", "what did I say?")
	r.Processed("k2")
	after := r.Session()
	if after.ID != before.ID || after.Generation != before.Generation || !after.Resumed {
		t.Fatalf("session before %+v, after %+v: want the same session and generation, resumed", before, after)
	}
	lf, err := r.Seat().LaunchFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ResumeArgv(r.Harness, before.ID, strings.Join(lf.Argv, " ")); err != nil {
		t.Fatalf("relaunch argv: %v", err)
	}
	resumed := false
	for _, ev := range r.Events(hookwire.EvSessionStart) {
		if !resumed && ev.Fields.Source == "resume" && ev.Fields.SessionID == before.ID {
			resumed = true
			t.Logf("SessionStart(resume) came %s after the relaunch and %s after k2's submit evidence (negative: before it)",
				ev.ReceivedAt.Sub(after.LaunchedAt).Round(time.Millisecond), ev.ReceivedAt.Sub(r.Status("k2").SubmittedAt).Round(time.Millisecond))
		}
	}
	if !resumed {
		t.Fatal("no SessionStart with source resume for the seat's session")
	}
	if second, _ := r.Request("k2"); second.History <= first.History || second.Session != "" && second.Session != before.ID {
		t.Fatalf("the turn after the relaunch: session %q, history %d (the first turn's %d): the conversation was not carried",
			second.Session, second.History, first.History)
	}
	if n := r.Turns(); n["k1"] != 1 || n["k2"] != 1 {
		t.Fatalf("model turns %v", n)
	}
}

// 5. The compaction cycle: pantty materializes the handoff and verifies it
// changed, sends /compact through the command door, the cycle's evidence
// arrives, and the handoff reaches the first request after the compaction.
func (s E2E) cycle(t *testing.T) {
	r := s.New(t, s.Prefix+"-compact")
	r.Start()
	r.Send("p1", "first piece of work")
	r.Processed("p1")
	if res := r.Run("handoff", "note", "--seat", r.Name, "always run the linter before the tests"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	if res := r.Run("seat", "compact", r.Name); res.Code != 0 {
		t.Fatalf("seat compact: %s\n%s", res, r.DriverLog())
	}
	cyc, err := r.Seat().CycleFile().Read()
	if err != nil || cyc.State != "done" || cyc.PreCompact == "" || cyc.PostCompact == "" || cyc.Hash == "" {
		t.Fatalf("cycle record: %+v %v", cyc, err)
	}
	r.Send("p2", "second piece of work")
	r.Processed("p2")
	var next E2ERequest
	compacted := false
	for _, q := range r.Requests() {
		compacted = compacted || q.Kind == s.CompactKind
		if compacted && q.Kind == "turn" {
			next = q
			break
		}
	}
	if id, _, _, _ := guard.MatchHeader(next.NewInput); id != "p2" {
		t.Fatalf("the first turn after the compaction carried %q, want p2", id)
	}
	if c := next.Context; !strings.Contains(c, "always run the linter before the tests") || !strings.Contains(c, "pantty handoff for seat "+r.Name) {
		t.Fatalf("the first request after the compaction did not carry the handoff: context=%q", c)
	}
	r.WaitFor("the injection recorded in the cycle", 10*time.Second, func() bool {
		c, err := r.Seat().CycleFile().Read()
		return err == nil && c.Injected != "" && c.InjectedHash == c.Hash && c.Error == ""
	})
	starts := 0
	for _, ev := range r.Events(hookwire.EvSessionStart) {
		if ev.Fields.Source == "compact" {
			starts++
		}
	}
	if starts != 1 {
		t.Fatalf("%d SessionStart(compact) events, want 1", starts)
	}
}

// Answered counts, per pantty message id, the turn requests the stand-in
// answered 200: what an outage run counts (PlayOutage).
func (r *E2ERig) Answered() map[string]int {
	return Answered(r.Requests(), func(q E2ERequest) (string, string, int) { return q.Kind, q.NewInput, q.Status })
}

// RealBinary is the real harness binary an adapter's e2e tests run: find is
// the adapter's CachedBinary (its environment variable env, else what
// scripts/test.sh installs). Without it the test skips, except under CI,
// where a missing harness is a failure.
func RealBinary(t testing.TB, find func() (string, error), harness, version, env string) string {
	t.Helper()
	bin, err := find()
	if err != nil {
		msg := fmt.Sprintf("%v; run scripts/test.sh (it installs %s %s into the harness cache) or set %s", err, harness, version, env)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}
