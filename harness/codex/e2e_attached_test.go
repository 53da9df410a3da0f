package codex_test

// A person at a Codex TUI attached to a seat's own app server
// (`codex resume <thread> --remote unix://SOCK` in a private tmux pane) while
// pantty's client (harness/codex/appserver) drives the same server: the facts
// issue #33's attached-TUI design relies on, measured 2026-12-06 on Codex CLI
// 0.171.0 against the stand-in (docs/codex.md, "A person at the attached TUI
// (measured 2026-12-06)"). Each test logs its times in ms from the action it
// measures, the notifications pantty's client saw, and the pane's screen.

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// attachedSeat is a seat's own app server (pantty's hooks installed), pantty's
// client on it with a thread it started, and a private tmux server for the
// person's TUI.
type attachedSeat struct {
	t    *testing.T
	r    *rig
	s    state.Seat
	cfg  config.Config
	srv  *appserver.Server
	c    *appserver.Conn
	th   appserver.Thread
	tm   *tmux.Client
	pane tmux.Pane
}

// note is one notification pantty's client saw, ms after the action measured.
type note struct {
	At     int64
	Method string
	Params json.RawMessage
}

// field reads a top-level string field of the params ("threadId"), or of
// the turn they carry ("turn.id").
func (n note) field(path string) string {
	var p struct {
		ThreadID string `json:"threadId"`
		TurnID   string `json:"turnId"`
		Turn     struct {
			ID string `json:"id"`
		} `json:"turn"`
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
		Run struct {
			EventName string `json:"eventName"`
		} `json:"run"`
	}
	json.Unmarshal(n.Params, &p)
	return map[string]string{"threadId": p.ThreadID, "turnId": p.TurnID, "turn.id": p.Turn.ID,
		"thread.id": p.Thread.ID, "run.eventName": p.Run.EventName}[path]
}

func newAttached(t *testing.T, name string) *attachedSeat {
	r, s, cfg, srv, c, th := seatServer(t, name)
	return &attachedSeat{t: t, r: r, s: s, cfg: cfg, srv: srv, c: c, th: th, tm: tmuxtest.Server(t)}
}

func (a *attachedSeat) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	a.t.Cleanup(cancel)
	return ctx
}

// open runs `codex ARGS…` in the pane with the seat's CODEX_HOME (its
// status line names the run state and the thread), the pane kept when the
// TUI exits.
func (a *attachedSeat) open(args ...string) {
	a.t.Helper()
	p, err := a.tm.NewSession(a.ctx(), tmux.NewSessionOpts{Name: "tui", Dir: a.cfg.Workdir, Width: 120, Height: 40,
		Argv: append([]string{codexBinary(a.t)}, args...), Env: []string{"CODEX_HOME=" + codex.Home(a.s, a.cfg)}, RemainOnExit: true})
	if err != nil {
		a.t.Fatal(err)
	}
	a.pane = p
}

func (a *attachedSeat) remote() string { return "unix://" + a.srv.Socket() }

// attach opens `codex resume <thread> --remote unix://SOCK` (in the pane it
// respawns, if there is one) and waits for its footer to say Ready on the
// thread.
func (a *attachedSeat) attach() time.Duration {
	a.t.Helper()
	t0 := time.Now()
	args := []string{"resume", a.th.ID, "--remote", a.remote()}
	if a.pane.ID == "" {
		a.open(args...)
	} else if _, err := a.tm.RespawnPane(a.ctx(), a.pane.ID, append([]string{codexBinary(a.t)}, args...), a.cfg.Workdir); err != nil {
		a.t.Fatal(err)
	}
	a.waitScreen("the attached TUI ready on the thread", 20*time.Second, func(s string) bool {
		_, thread, _, _ := codex.Status(s)
		return codex.Adapter{}.InputReady(s) && thread == a.th.ID
	})
	return time.Since(t0)
}

func (a *attachedSeat) screen() string {
	s, err := a.tm.CaptureWithHistory(a.ctx(), a.pane.ID, 200)
	if err != nil {
		a.t.Fatal(err)
	}
	return s
}

// waitScreen reads the pane every 50 ms until cond holds; it returns that
// screen and how long it took.
func (a *attachedSeat) waitScreen(what string, limit time.Duration, cond func(string) bool) (string, time.Duration) {
	a.t.Helper()
	t0 := time.Now()
	for {
		s := a.screen()
		if cond(s) {
			return s, time.Since(t0)
		}
		if time.Since(t0) > limit {
			a.t.Fatalf("pane: no %s within %s; screen:\n%s", what, limit, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// panes is the tmux server's one pane (its process state).
func (a *attachedSeat) paneState() tmux.Pane {
	a.t.Helper()
	ps, err := a.tm.ListPanes(a.ctx())
	if err != nil || len(ps) != 1 {
		a.t.Fatalf("list panes: %v %+v", err, ps)
	}
	return ps[0]
}

func (a *attachedSeat) typeText(text string, enter bool) {
	a.t.Helper()
	if err := a.tm.SendLiteral(a.ctx(), a.pane.ID, text); err != nil {
		a.t.Fatal(err)
	}
	if enter {
		// A pause as a person's: Enter straight after the text can land in
		// the same read as a paste's newline.
		time.Sleep(200 * time.Millisecond)
		enterUntilTaken(a.t, a.screen, func() error { return a.tm.SendKeys(a.ctx(), a.pane.ID, "Enter") }, text)
	}
}

// enterUntilTaken presses Enter, and again, as a person would, while the
// composer still holds text a second after the last press (at most three
// presses): under a loaded CI run a single Enter 200 ms after the text was
// taken into the TUI's paste burst and the prompt stayed in the box
// (TestRemoteTUIWithoutResumeStartsItsOwnThread, 2026-12-07). It returns how
// many presses it took; a box it cannot read is left to the caller's wait.
func enterUntilTaken(t testing.TB, screen func() string, enter func() error, text string) int {
	t.Helper()
	first, _, _ := strings.Cut(text, "\n")
	for presses := 1; ; presses++ {
		if err := enter(); err != nil {
			t.Fatal(err)
		}
		pressed := time.Now()
		for time.Since(pressed) < time.Second {
			// The pane is read as the caller's own waits read it.
			time.Sleep(50 * time.Millisecond)
			box, ok := codex.Adapter{}.Composer(screen())
			if !ok || !strings.Contains(box, first) {
				return presses
			}
		}
		if presses == 3 {
			return presses
		}
		t.Logf("the composer still holds %q a second after Enter: Enter again", first)
	}
}

// notes reads c's notifications, times relative to t0, until stop says so
// (it fails after limit) or, with stop nil, for limit.
func notes(t *testing.T, c *appserver.Conn, t0 time.Time, limit time.Duration, stop func(note) bool) []note {
	t.Helper()
	var out []note
	deadline := time.After(limit)
	for {
		select {
		case m, ok := <-c.Notifications():
			if !ok {
				t.Fatalf("connection ended: %v (seen %v)", c.Err(), methodsOf(out))
			}
			n := note{At: time.Since(t0).Milliseconds(), Method: m.Method, Params: m.Params}
			out = append(out, n)
			if stop != nil && stop(n) {
				return out
			}
		case <-deadline:
			if stop != nil {
				t.Fatalf("not seen within %s: %v", limit, methodsOf(out))
			}
			return out
		}
	}
}

func methodsOf(ns []note) []string {
	var out []string
	for _, n := range ns {
		if n.Method != "item/agentMessage/delta" {
			out = append(out, n.Method)
		}
	}
	return out
}

// endOf stops notes at the turn/completed of turn id ("" any).
func endOf(id string) func(note) bool {
	return func(n note) bool {
		return n.Method == appserver.MethodTurnCompleted && (id == "" || n.field("turn.id") == id)
	}
}

// runTurn starts a turn with text through pantty's client and waits for its
// end: a thread has a rollout only after its first turn.
func (a *attachedSeat) runTurn(text string) appserver.End {
	a.t.Helper()
	turn, err := a.c.StartTurn(a.ctx(), a.th.ID, text)
	if err != nil {
		a.t.Fatal(err)
	}
	ns := notes(a.t, a.c, time.Now(), 30*time.Second, endOf(turn.ID))
	last := ns[len(ns)-1]
	e, _ := appserver.TurnEnd(appserver.Message{Method: last.Method, Params: last.Params})
	return e
}

// requestFor is the stand-in's turn request whose new input is text.
func (a *attachedSeat) requestFor(text string) (int, bool) {
	for _, q := range a.r.api.Requests() {
		if q.Kind == "turn" && q.NewInput == text {
			return q.Messages, true
		}
	}
	return 0, false
}

// TestAttachedDraftSurvivesAnRPCTurn pins, on 0.171.0 (2026-12-06): a
// person's draft in the attached TUI's composer (typed, no Enter) does not
// stop pantty's turn/start — the turn runs and completes with only the
// client's text (the draft is neither sent nor merged), the TUI draws the
// client's turn and its reply in its transcript, and the draft is still in
// the composer, untouched, after the turn.
func TestAttachedDraftSurvivesAnRPCTurn(t *testing.T) {
	a := newAttached(t, "cxadraft")
	a.runTurn("first turn from the client")
	ready := a.attach()
	const draft, text = "half a thought", "rpc turn while a draft waits"
	a.typeText(draft, false)
	a.waitScreen("the draft in the composer", 5*time.Second, func(s string) bool {
		c, _ := codex.Adapter{}.Composer(s)
		return c == draft
	})
	t0 := time.Now()
	turn, err := a.c.StartTurn(a.ctx(), a.th.ID, text)
	if err != nil {
		t.Fatal(err)
	}
	answered := time.Since(t0)
	ns := notes(t, a.c, t0, 30*time.Second, endOf(turn.ID))
	last := ns[len(ns)-1]
	end, _ := appserver.TurnEnd(appserver.Message{Method: last.Method, Params: last.Params})
	screen, drawn := a.waitScreen("the client's turn drawn and the footer Ready", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "› "+text) && strings.Contains(s, "standin received: "+text) && codex.Adapter{}.InputReady(s)
	})
	composer, _ := codex.Adapter{}.Composer(screen)
	t.Logf("attached in %d ms; turn/start answered %d ms, turn/completed %d ms (%s), drawn %d ms after it; composer %q; methods %v\n%s",
		ready.Milliseconds(), answered.Milliseconds(), last.At, end.Status, drawn.Milliseconds(), composer, methodsOf(ns), screen)
	if end.Status != appserver.StatusCompleted || end.Reply != "standin received: "+text {
		t.Fatalf("turn %s, reply %q", end.Status, end.Reply)
	}
	if _, ok := a.requestFor(text); !ok {
		t.Fatal("the model was not sent the client's text alone")
	}
	for _, q := range a.r.api.Requests() {
		if strings.Contains(q.NewInput, draft) {
			t.Fatalf("the draft reached the model: %q", q.NewInput)
		}
	}
	if composer != draft {
		t.Fatalf("composer %q after the client's turn, want the draft %q", composer, draft)
	}
}

// TestAttachedPersonsTurnIsSeenAndTurnStartSteersIt pins, on 0.171.0
// (2026-12-06): a turn a person starts in the attached TUI reaches pantty's
// client as it reaches the TUI — thread/status/changed active, turn/started,
// the userMessage item with the person's text and a non-null clientId (the
// client's own turns have clientId null) — and turn/start from pantty's
// client while that turn runs is neither refused nor queued: it is answered
// with the RUNNING turn's id and steers it (no second turn/started; the
// client's text is a model request of its own inside that turn, drawn in the
// pane, its UserPromptSubmit hook naming the running turn; one
// turn/completed, just after thread/status/changed idle).
func TestAttachedPersonsTurnIsSeenAndTurnStartSteersIt(t *testing.T) {
	a := newAttached(t, "cxasteer")
	a.runTurn("first turn from the client")
	a.attach()
	const person, text = "person turn [standin:slow=4s]", "rpc turn during the person's turn"
	t0 := time.Now()
	a.typeText(person, true)
	ns := notes(t, a.c, t0, 15*time.Second, func(n note) bool { return n.Method == "item/agentMessage/delta" })
	started, ok := firstOf(ns, appserver.MethodTurnStarted)
	if !ok {
		t.Fatalf("no turn/started for the person's turn: %v", methodsOf(ns))
	}
	personTurn := started.field("turn.id")
	if active, ok := statusOf(ns, a.th.ID); !ok || active.At > started.At || !strings.Contains(string(active.Params), `"active"`) {
		t.Fatalf("no thread/status/changed active before turn/started: %v", methodsOf(ns))
	}
	if msg, ok := userMessage(ns); !ok || msg.Text != person || msg.ClientID == nil {
		t.Fatalf("the person's userMessage item: %+v", msg)
	}
	t1 := time.Now()
	turn, err := a.c.StartTurn(a.ctx(), a.th.ID, text)
	if err != nil {
		t.Fatalf("turn/start during the person's turn: %v", err)
	}
	answered := time.Since(t1)
	more := notes(t, a.c, t1, 20*time.Second, endOf(""))
	last := more[len(more)-1]
	end, _ := appserver.TurnEnd(appserver.Message{Method: last.Method, Params: last.Params})
	idle := notes(t, a.c, t1, 2*time.Second, nil)
	var prompts, queue int
	for _, n := range append(append(append([]note{}, ns...), more...), idle...) {
		if n.Method == "hook/started" && n.field("run.eventName") == "userPromptSubmit" && n.field("turnId") == personTurn {
			prompts++
		}
		if n.Method == "thread/queue/changed" {
			queue++
		}
	}
	steerMsgs, steered := a.requestFor(text)
	screen, _ := a.waitScreen("the steer drawn", 10*time.Second, func(s string) bool { return strings.Contains(s, "› "+text) })
	t.Logf("person's turn/started %d ms after Enter; turn/start answered %d ms with turn %s (person's %s); turn/completed %d ms (%s, reply %q); "+
		"UserPromptSubmit hooks in the turn %d; thread/queue/changed %d; the steer's request carried %d messages; methods %v then %v\n%s",
		started.At, answered.Milliseconds(), turn.ID, personTurn, last.At, end.Status, end.Reply, prompts, queue, steerMsgs, methodsOf(ns), methodsOf(more), screen)
	if turn.ID != personTurn || turn.Status != appserver.StatusInProgress {
		t.Fatalf("turn/start answered %+v, want the running turn %s", turn, personTurn)
	}
	if _, again := firstOf(more, appserver.MethodTurnStarted); again {
		t.Fatalf("a second turn/started: %v", methodsOf(more))
	}
	if end.TurnID != personTurn || end.Status != appserver.StatusCompleted || end.Reply != "standin received: "+text {
		t.Fatalf("the turn ended %+v", end)
	}
	if !steered || prompts != 2 {
		t.Fatalf("the client's text: its own request %v, UserPromptSubmit hooks in the turn %d (want 2)", steered, prompts)
	}
	if st, ok := statusOf(more, a.th.ID); !ok || !strings.Contains(string(st.Params), `"idle"`) || st.At > last.At {
		t.Fatalf("no thread/status/changed idle before turn/completed: %v", methodsOf(more))
	}
	// The steer's own UserPromptSubmit names the client's text and the
	// running turn: a board message's header would bind there.
	var steer hookwire.Event
	a.r.WaitFor("the steer's UserPromptSubmit event", 10*time.Second, func() bool {
		for _, ev := range a.r.Events(hookwire.EvUserPromptSubmit) {
			if ev.Fields.Prompt == text {
				steer = ev
			}
		}
		return steer.Kind != ""
	})
	if steer.Fields.PromptID != personTurn {
		t.Fatalf("the steer's UserPromptSubmit names turn %q, want %s", steer.Fields.PromptID, personTurn)
	}
}

func firstOf(ns []note, method string) (note, bool) {
	for _, n := range ns {
		if n.Method == method {
			return n, true
		}
	}
	return note{}, false
}

// statusOf is the first thread/status/changed for thread in ns (Codex's
// title generation runs an ephemeral thread of its own beside it).
func statusOf(ns []note, thread string) (note, bool) {
	for _, n := range ns {
		if n.Method == "thread/status/changed" && n.field("threadId") == thread {
			return n, true
		}
	}
	return note{}, false
}

// userMessage is the first userMessage item/started in ns.
type userMsg struct {
	Text     string
	ClientID *string
}

func userMessage(ns []note) (userMsg, bool) {
	for _, n := range ns {
		if n.Method != "item/started" {
			continue
		}
		var p struct {
			Item struct {
				Type     string  `json:"type"`
				ClientID *string `json:"clientId"`
				Content  []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"item"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.Item.Type == "userMessage" && len(p.Item.Content) > 0 {
			return userMsg{Text: p.Item.Content[0].Text, ClientID: p.Item.ClientID}, true
		}
	}
	return userMsg{}, false
}

// TestRemoteTUIWithoutResumeStartsItsOwnThread pins, on 0.171.0
// (2026-12-06): `codex --remote unix://SOCK` (no resume) starts a thread of
// its own at launch (its footer names it; pantty's client is told
// thread/started), and a turn on it reaches a client that did not start or
// resume it only as thread/status/changed (and thread/name/updated): no
// turn/started, no turn/completed, no items.
func TestRemoteTUIWithoutResumeStartsItsOwnThread(t *testing.T) {
	a := newAttached(t, "cxaown")
	notes(t, a.c, time.Now(), 300*time.Millisecond, nil) // the client's own thread/started
	t0 := time.Now()
	a.open("--remote", a.remote())
	screen, ready := a.waitScreen("the TUI ready", 20*time.Second, codex.Adapter{}.InputReady)
	_, own, _, _ := codex.Status(screen)
	ns := notes(t, a.c, t0, 10*time.Second, func(n note) bool {
		return n.Method == "thread/started" && n.field("thread.id") == own
	})
	if own == "" || own == a.th.ID {
		t.Fatalf("the TUI's thread %q (the client's is %s)", own, a.th.ID)
	}
	t1 := time.Now()
	const person = "person on its own thread"
	a.typeText(person, true)
	a.waitScreen("the person's reply", 10*time.Second, func(s string) bool { return strings.Contains(s, "standin received: "+person) })
	seen := notes(t, a.c, t1, time.Second, nil)
	var onOwn []string
	for _, n := range seen {
		if n.field("threadId") == own || n.field("thread.id") == own {
			onOwn = append(onOwn, n.Method)
		}
	}
	t.Logf("ready %d ms after launch on thread %s, thread/started at %d ms; the client saw for that thread: %v (all: %v)",
		ready.Milliseconds(), own, ns[len(ns)-1].At, onOwn, methodsOf(seen))
	if _, ok := a.requestFor(person); !ok {
		t.Fatal("the person's turn did not reach the model")
	}
	statusSeen := false
	for _, m := range onOwn {
		switch m {
		case "thread/status/changed":
			statusSeen = true
		case "thread/name/updated":
		default:
			t.Fatalf("a client that did not join the TUI's thread got %s for it", m)
		}
	}
	if !statusSeen {
		t.Fatalf("no thread/status/changed for the TUI's thread: %v", onOwn)
	}
}

// TestRemoteTUIResumesOnlyAThreadWithATurn pins, on 0.171.0 (2026-12-06):
// `codex resume <thread> --remote` on a thread the server started but that
// had no turn yet fails at once and the TUI exits (the pane dies) with
// "no rollout found for thread id <thread> (code -32600)"; after one turn
// through pantty's client the same command comes up Ready on that thread.
func TestRemoteTUIResumesOnlyAThreadWithATurn(t *testing.T) {
	a := newAttached(t, "cxaresume")
	t0 := time.Now()
	a.open("resume", a.th.ID, "--remote", a.remote())
	for !a.paneState().Dead {
		if time.Since(t0) > 15*time.Second {
			t.Fatalf("the TUI did not exit; screen:\n%s", a.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	died := time.Since(t0)
	screen := a.screen()
	t.Logf("before the first turn: the pane died %d ms after launch:\n%s", died.Milliseconds(), screen)
	if p := a.paneState(); p.DeadStatus != 1 && !p.StatusPending() {
		t.Fatalf("the TUI exited %+v, want status 1", p)
	}
	if !strings.Contains(screen, "no rollout found for thread id "+a.th.ID) || !strings.Contains(screen, "(code -32600)") {
		t.Fatalf("the dead pane does not say why:\n%s", screen)
	}
	a.runTurn("first turn from the client")
	ready := a.attach() // the same command, respawned in the dead pane
	t.Logf("after one turn: ready on %s in %d ms", a.th.ID, ready.Milliseconds())
}

// TestAttachingRunsNoSessionStart pins, on 0.171.0 (2026-12-06): the
// thread's first turn through pantty's client runs pantty's SessionStart
// hook (source startup) in the server; attaching a TUI with resume --remote
// and a person's turn in it run no other SessionStart (no hook/started
// sessionStart notification, one SessionStart event in the seat's events/),
// while the person's turn does run UserPromptSubmit and Stop into events/,
// as a board turn does (no guard header: it did not come from the board).
func TestAttachingRunsNoSessionStart(t *testing.T) {
	a := newAttached(t, "cxahooks")
	a.runTurn("first turn from the client")
	a.r.WaitFor("the first turn's SessionStart", 10*time.Second, func() bool { return len(a.r.Events(hookwire.EvSessionStart)) == 1 })
	t0 := time.Now()
	a.attach()
	const person = "person after attaching"
	a.typeText(person, true)
	ns := notes(t, a.c, t0, 20*time.Second, endOf(""))
	for _, n := range ns {
		if n.Method == "hook/started" && n.field("run.eventName") == "sessionStart" {
			t.Fatalf("SessionStart ran at %d ms after the attach", n.At)
		}
	}
	var prompt hookwire.Event
	a.r.WaitFor("the person's Stop event", 10*time.Second, func() bool {
		for _, ev := range a.r.Events(hookwire.EvUserPromptSubmit) {
			if ev.Fields.Prompt == person {
				prompt = ev
			}
		}
		return prompt.Kind != "" && len(a.r.Events(hookwire.EvStop)) == 2
	})
	starts := a.r.Events(hookwire.EvSessionStart)
	t.Logf("SessionStart events %d (source %q); the person's UserPromptSubmit on %s; turn/completed %d ms after the attach began; methods %v",
		len(starts), starts[0].Fields.Source, prompt.Fields.SessionID, ns[len(ns)-1].At, methodsOf(ns))
	if len(starts) != 1 || starts[0].Fields.Source != "startup" {
		t.Fatalf("SessionStart events %+v", starts)
	}
	if prompt.Fields.SessionID != a.th.ID {
		t.Fatalf("the person's UserPromptSubmit names session %q", prompt.Fields.SessionID)
	}
}

// TestAttachedTUIReconnectsToANewServer pins, on 0.171.0 (2026-12-06): the
// attached TUI outlives a SIGKILL of its app server — the pane's process
// stays (not dead, same pid) and the screen says "Reconnecting to server…"
// with a seconds counter while its footer still says Ready — and when a new server listens on the same socket
// path it reconnects by itself, on the same thread: a person's next turn
// runs there with the earlier history, and pantty's client on the new
// server (thread/resume) sees it.
func TestAttachedTUIReconnectsToANewServer(t *testing.T) {
	a := newAttached(t, "cxakill")
	a.runTurn("remember the zebra")
	a.attach()
	pid := a.paneState().PID
	t0 := time.Now()
	if err := syscall.Kill(a.srv.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, said := a.waitScreen("the reconnect notice", 10*time.Second, func(s string) bool { return strings.Contains(s, "Reconnecting to server") })
	time.Sleep(2 * time.Second) // a while without a server
	if p := a.paneState(); p.Dead || p.PID != pid {
		t.Fatalf("the TUI did not outlive its server: %+v", p)
	}
	// The footer keeps saying Ready while no server answers: it is no
	// witness that the TUI is connected.
	if down := a.screen(); !strings.Contains(down, "Reconnecting to server") || !(codex.Adapter{}).InputReady(down) {
		t.Fatalf("without a server the pane shows:\n%s", down)
	}
	t1 := time.Now()
	srv, err := codex.StartAppServer(a.ctx(), harness.Launch{Seat: a.s, Config: a.cfg, Pantty: a.r.Bin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	listening := time.Since(t1)
	screen, back := a.waitScreen("the TUI back", 25*time.Second, func(s string) bool {
		_, thread, _, _ := codex.Status(s)
		return !strings.Contains(lastLines(s, 8), "Reconnecting to server") && codex.Adapter{}.InputReady(s) && thread == a.th.ID
	})
	c, err := srv.Dial(a.ctx(), "pantty", "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.ResumeThread(a.ctx(), a.th.ID); err != nil {
		t.Fatal(err)
	}
	const person = "what was it?"
	t2 := time.Now()
	a.typeText(person, true)
	ns := notes(t, c, t2, 20*time.Second, endOf(""))
	msgs, ok := a.requestFor(person)
	t.Logf("notice %d ms after the kill; new server started %d ms after the kill, listening in %d ms; TUI back %d ms after that; "+
		"the person's turn: turn/completed %d ms on the new client, request carried %d messages; methods %v\n%s",
		said.Milliseconds(), t1.Sub(t0).Milliseconds(), listening.Milliseconds(), back.Milliseconds(), ns[len(ns)-1].At, msgs, methodsOf(ns), screen)
	if _, started := firstOf(ns, appserver.MethodTurnStarted); !started || !ok || msgs < 3 {
		t.Fatalf("after the reconnect: turn/started %v, request %v with %d messages", started, ok, msgs)
	}
	if p := a.paneState(); p.Dead || p.PID != pid {
		t.Fatalf("the pane's process changed: %+v", p)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
