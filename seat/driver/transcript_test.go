package driver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// fakeServer is a scripted pane: it shows a screen, changes it when a key it
// was told about is sent (react), and records what the driver does to it, in
// order, with the screen shown at that moment. A key can also start a
// sequence of frames (then: one frame per capture, the last one stays), as a
// harness redraws after a key. Pane watches capture it from their own
// goroutine, hence the lock. Operations a transcript does not expect fail.
type fakeServer struct {
	mu      sync.Mutex
	screen  string
	react   map[string]string   // key sent → the screen after it
	then    map[string][]string // key sent → the frames the next captures show (once)
	frames  []string
	actions []string
	shown   []string // the screen shown when each action was taken
	clients []tmux.ClientInfo
}

func (f *fakeServer) show(screen string) { f.mu.Lock(); f.screen = screen; f.mu.Unlock() }

func (f *fakeServer) did() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.actions)
}

func (f *fakeServer) Capture(context.Context, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.frames) > 0 {
		f.screen, f.frames = f.frames[0], f.frames[1:]
	}
	return f.screen, nil
}
func (f *fakeServer) CaptureWithHistory(ctx context.Context, pane string, _ int) (string, error) {
	return f.Capture(ctx, pane)
}
func (f *fakeServer) SendKeys(_ context.Context, _ string, keys ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := strings.Join(keys, " ")
	f.actions, f.shown = append(f.actions, "keys "+k), append(f.shown, f.screen)
	if s, ok := f.react[k]; ok {
		f.screen = s
	}
	if fr, ok := f.then[k]; ok {
		f.frames = append(f.frames, fr...)
		delete(f.then, k)
	}
	return nil
}
func (f *fakeServer) Paste(_ context.Context, _ string, text []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions, f.shown = append(f.actions, "paste "+string(text)), append(f.shown, f.screen)
	if s, ok := f.react["paste"]; ok {
		f.screen = s
	}
	if fr, ok := f.then["paste"]; ok {
		f.frames = append(f.frames, fr...)
		delete(f.then, "paste")
	}
	return nil
}

var errNotScripted = errors.New("not scripted in this transcript")

func (f *fakeServer) ListPanes(context.Context) ([]tmux.Pane, error) { return nil, errNotScripted }
func (f *fakeServer) Clients(context.Context) ([]tmux.ClientInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.clients), nil
}
func (f *fakeServer) WatchSession(context.Context, string) (*tmux.Watch, error) {
	return nil, errNotScripted
}
func (f *fakeServer) SetHook(context.Context, string, string, string) error { return errNotScripted }
func (f *fakeServer) NewSession(context.Context, tmux.NewSessionOpts) (tmux.Pane, error) {
	return tmux.Pane{}, errNotScripted
}
func (f *fakeServer) RespawnPane(context.Context, string, []string, string) (tmux.Pane, error) {
	return tmux.Pane{}, errNotScripted
}
func (f *fakeServer) KillSession(context.Context, string) error { return errNotScripted }
func (f *fakeServer) Reap(context.Context) error                { return errNotScripted }

// The two screens the scripted pane shows: an empty input box, and a turn
// running as Claude Code draws it.
const (
	idleScreen = "──────\n> \n──────"
	busyScreen = "✻ Thinking… (esc to interrupt)"
)

// idleDriver is a driver whose harness is up and idle on a scripted pane: no
// tmux server, no harness process, no loop — the decisions and what they
// write, called directly with the events a harness would send.
func idleDriver(t *testing.T) (*Driver, *fakeServer) {
	t.Helper()
	s, err := state.Open(t.TempDir(), "tr")
	if err != nil {
		t.Fatal(err)
	}
	// The directories a started seat has: without tmp/ every state write
	// fails, which a driver now takes (rightly) as a state root it cannot
	// write, and holds its queue.
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	pane := &fakeServer{screen: idleScreen}
	d := &Driver{S: s, Ad: bareAdapter{}, Lock: &seat.Lock{Owner: state.Owner{Holder: "h-test"}},
		Log: log.New(io.Discard, "", 0), tm: pane, facts: guard.DefaultDispatchFacts,
		Cfg: config.Config{Name: "tr", Harness: "bare", Shape: config.ShapeResident,
			SubmitTimeout: config.Duration{Duration: time.Hour}, TurnCeiling: config.Duration{Duration: time.Hour},
			HeartbeatInterval: config.Duration{Duration: time.Hour}, SubmitRetries: 3}}
	d.S.Box.Now = d.now // as Run does: a transcript's clock is the statuses' too
	d.sess = state.Session{ID: "11111111-2222-4333-8444-555555555555", PaneID: "%0"}
	d.entries = map[string]*inbox.Entry{}
	d.ready = true
	d.begin(machine.Idle, "")
	return d, pane
}

// queue stores a board message in the inbox and tells the driver, as the
// inbox watch does.
func queue(t *testing.T, d *Driver, id, text string) {
	t.Helper()
	if _, err := d.S.Enqueue(guard.Message{ID: id, From: "board", Text: text}, guard.DefaultMaxMessageBytes, time.Now()); err != nil {
		t.Fatal(err)
	}
	d.addMessage(id)
}

// TestADeliveryTranscript pins the board door's path through the driver as
// events in and pane actions and state files out, without tmux: a queued
// message is pasted (guard header and delimiters) into the empty input box
// (no C-u: there is nothing of pantty's to clear), then Enter on its own; UserPromptSubmit carrying the header's id
// and nonce makes it submitted; Stop makes it processed and moves the cursor.
// Evidence with another nonce (a person retyping an old header) binds nothing.
func TestADeliveryTranscript(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)

	if len(pane.actions) != 2 || !strings.HasPrefix(pane.actions[0], "paste ") || pane.actions[1] != "keys Enter" {
		t.Fatalf("pane actions: %q, want one paste, Enter", pane.actions)
	}
	pasted := strings.TrimPrefix(pane.actions[0], "paste ")
	id, nonce, _, ok := guard.MatchHeader(pasted)
	if !ok || id != "m1" || !strings.Contains(pasted, "fix the build") {
		t.Fatalf("the paste carries no guard header for m1: %q", pasted)
	}
	st := status(t, d, "m1")
	if st.State != inbox.StateSubmitting || st.Nonce != nonce || st.Attempts != 1 || d.phase != machine.Submitting {
		t.Fatalf("after the paste: %+v, phase %s", st, d.phase)
	}

	forged := strings.ReplaceAll(pasted, nonce, strings.Repeat("0", len(nonce)))
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: time.Now(),
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: forged, PromptID: "p0"}})
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitting {
		t.Fatalf("evidence with another nonce bound the flight: %+v", st)
	}

	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: time.Now(), File: "events/e1.json",
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: pasted, PromptID: "p1"}})
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitted || st.PromptID != "p1" || d.phase != machine.InTurn {
		t.Fatalf("after UserPromptSubmit: %+v, phase %s", st, d.phase)
	}

	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(), File: "events/e2.json",
		Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1", LastAssistantMessage: "done"}})
	st = status(t, d, "m1")
	if st.State != inbox.StateProcessed || st.TurnEnd != "events/e2.json" || d.phase != machine.Idle {
		t.Fatalf("after Stop: %+v, phase %s", st, d.phase)
	}
	c, err := d.S.CursorFile().Read()
	if err != nil || c.ID != "m1" || c.State != inbox.StateProcessed || c.Closed != 1 {
		t.Fatalf("cursor after m1: %+v (%v)", c, err)
	}
	if n := len(pane.actions); n != 2 {
		t.Fatalf("the turn's end touched the pane: %q", pane.actions[2:])
	}
}

// status reads a message's status as the readers do (from its file).
func status(t *testing.T, d *Driver, id string) inbox.Status {
	t.Helper()
	st, err := d.S.ReadStatus(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// busyAdapter is bareAdapter whose harness shows a running turn as
// "esc to interrupt", as Claude Code does.
type busyAdapter struct{ bareAdapter }

func (busyAdapter) Busy(screen string) bool { return strings.Contains(screen, "esc to interrupt") }

// TestAPersonsTurnHoldsTheQueue pins the seat's other owner: a prompt pantty
// did not build (a person typing at the pane) is a turn pantty waits out.
// While it runs, and while the pane shows a turn running, no board message is
// pasted; its Stop (matched by its prompt id) releases the queue, and the
// next boundary pastes the board message.
func TestAPersonsTurnHoldsTheQueue(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = busyAdapter{}
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: time.Now(),
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: "what does this function do?", PromptID: "person-1"}})
	queue(t, d, "m1", "fix the build")
	// The pane does not show the person's turn yet: the prompt alone holds.
	submitNow(t, d)
	if len(pane.actions) != 0 || status(t, d, "m1").State != inbox.StateQueued {
		t.Fatalf("a board message went in during a person's turn: %q", pane.actions)
	}

	// Another prompt's Stop does not end the person's turn.
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(),
		Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "someone-else"}})
	submitNow(t, d)
	if len(pane.actions) != 0 {
		t.Fatalf("another prompt's Stop released the queue: %q", pane.actions)
	}

	// Its own Stop does, but the pane shows a turn (the person typed again,
	// its UserPromptSubmit not consumed yet): the delivery waits for the pane.
	pane.show(busyScreen)
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(),
		Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "person-1"}})
	submitNow(t, d)
	if len(pane.actions) != 0 || status(t, d, "m1").State != inbox.StateQueued {
		t.Fatalf("pasted into a pane that shows a running turn: %q", pane.actions)
	}

	pane.show(idleScreen)
	submitNow(t, d)
	if len(pane.actions) != 2 || !strings.Contains(pane.actions[0], "fix the build") || status(t, d, "m1").State != inbox.StateSubmitting {
		t.Fatalf("after the person's turn: %q, %+v", pane.actions, status(t, d, "m1"))
	}
}

// TestAMessageWaitsForItsTimeOnTheDriversClock: a message put back with a
// not-before time (a turn to retry after a pause, a provider's reset) is not
// pasted before that time on the driver's clock, and is at the next boundary
// after it. The clock is the transcript's own: no wait in the test.
func TestAMessageWaitsForItsTimeOnTheDriversClock(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d.clock = func() time.Time { return now }
	if _, err := d.S.Enqueue(guard.Message{ID: "m1", From: "board", Text: "try again later"}, guard.DefaultMaxMessageBytes, now); err != nil {
		t.Fatal(err)
	}
	d.addMessage("m1")
	d.entries["m1"].Status.NotBefore = now.Add(time.Minute)
	t.Cleanup(d.waitT.stop)

	submitNow(t, d)
	now = now.Add(59 * time.Second)
	submitNow(t, d)
	if len(pane.actions) != 0 || status(t, d, "m1").State != inbox.StateQueued {
		t.Fatalf("pasted before its time: %q", pane.actions)
	}
	now = now.Add(2 * time.Second)
	submitNow(t, d)
	if len(pane.actions) != 2 || status(t, d, "m1").State != inbox.StateSubmitting {
		t.Fatalf("not pasted once its time had come: %q, %+v", pane.actions, status(t, d, "m1"))
	}
}

// TestSilenceRetriesEnterNeverThePaste: a paste whose UserPromptSubmit never
// comes (the Enter was lost, or became a newline) gets Enter again, up to
// submit_retries times, and then fails undelivered with the box cleared. The
// text itself is never pasted a second time: once the harness may have it, a
// second paste could run the message twice.
func TestSilenceRetriesEnterNeverThePaste(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	for i := 0; i < d.Cfg.SubmitRetries; i++ {
		d.onEvidenceTimeout()
		if st := status(t, d, "m1"); st.State != inbox.StateSubmitting {
			t.Fatalf("after silence %d: %+v", i+1, st)
		}
	}
	d.onEvidenceTimeout()
	st := status(t, d, "m1")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonUndelivered {
		t.Fatalf("after %d Enter retries: %+v", d.Cfg.SubmitRetries, st)
	}
	want := []string{"paste", "keys Enter", "keys Enter", "keys Enter", "keys Enter", "keys C-u"}
	got := make([]string, len(pane.actions))
	for i, a := range pane.actions {
		got[i], _, _ = strings.Cut(a, " [pantty]") // the paste's text is the delivery transcript's business
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("pane actions:\n got %q\nwant %q", got, want)
	}
}

// TestSilenceIsJudgedOnTheEventsAlreadyWritten: the submit timeout fires
// while the harness's UserPromptSubmit is already in the events directory,
// its wake-up not yet taken by the loop (under load a select may pick the
// timer first). The driver reads the record before judging the silence
// (timedOut, as the loop runs every timeout): the message is submitted, and
// no Enter goes to the pane.
func TestSilenceIsJudgedOnTheEventsAlreadyWritten(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "m1", "fix the build")
	submitNow(t, d)
	if len(pane.actions) != 2 {
		t.Fatalf("no delivery: %q", pane.actions)
	}
	payload, err := json.Marshal(map[string]string{"hook_event_name": hookwire.EvUserPromptSubmit, "session_id": d.sess.ID,
		"prompt": strings.TrimPrefix(pane.actions[0], "paste "), "prompt_id": "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.S.WriteEvent(hookwire.EvUserPromptSubmit, payload, time.Now()); err != nil {
		t.Fatal(err)
	}
	d.timedOut(d.onEvidenceTimeout)
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitted || st.PromptID != "p1" {
		t.Fatalf("m1 after the timeout with its evidence written: %+v", st)
	}
	if len(pane.actions) != 2 {
		t.Fatalf("keys after the evidence was written: %q", pane.actions[2:])
	}
}

// deliverAndTake pastes the next message and feeds the UserPromptSubmit its
// paste carries: the message is then in its turn. It returns the prompt id.
func deliverAndTake(t *testing.T, d *Driver, pane *fakeServer, promptID string) {
	t.Helper()
	n := len(pane.actions)
	submitNow(t, d)
	if len(pane.actions) != n+2 {
		t.Fatalf("no delivery: %q", pane.actions[n:])
	}
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: d.now(),
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: strings.TrimPrefix(pane.actions[n], "paste "), PromptID: promptID}})
}

// TestATransientFailureHoldsTheQueueUntilItsProbe: a turn the provider failed
// (StopFailure, a 5xx in Claude Code's words) is not the message's fault: it
// goes back to the head of the queue with its reason, the heartbeat names the
// outage, the queue behind it is held until the probe time on the driver's
// clock ([recovery] backoff), and the probe is the same message. Its Stop
// ends the outage.
func TestATransientFailureHoldsTheQueueUntilItsProbe(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d.clock = func() time.Time { return now }
	d.Cfg.Recovery = config.RecoveryConfig{Backoff: config.Duration{Duration: time.Minute},
		BackoffMax: config.Duration{Duration: time.Hour}, TransientAttempts: 5}
	t.Cleanup(d.waitT.stop)
	for _, id := range []string{"m1", "m2"} {
		if _, err := d.S.Enqueue(guard.Message{ID: id, From: "board", Text: "work " + id}, guard.DefaultMaxMessageBytes, now); err != nil {
			t.Fatal(err)
		}
		d.addMessage(id)
	}
	deliverAndTake(t, d, pane, "p1")
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStopFailure, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1",
		Error: "server_error", LastAssistantMessage: "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment."}})
	st := status(t, d, "m1")
	if st.State != inbox.StateQueued || st.Reason != hookwire.ReasonTransient || st.Transients != 1 || !st.NotBefore.Equal(now.Add(time.Minute)) {
		t.Fatalf("m1 after a 5xx: %+v", st)
	}
	hb, err := d.S.HeartbeatFile().Read()
	if err != nil || hb.Fault != machine.ClassTransient || !strings.Contains(hb.FaultCause, "500 Internal server error") || hb.Phase != state.PhaseRetry {
		t.Fatalf("heartbeat during the outage: %+v (%v)", hb, err)
	}

	pasted := len(pane.actions)
	now = now.Add(59 * time.Second)
	submitNow(t, d)
	if len(pane.actions) != pasted || status(t, d, "m2").State != inbox.StateQueued {
		t.Fatalf("the queue moved before the probe: %q", pane.actions[pasted:])
	}

	now = now.Add(2 * time.Second)
	deliverAndTake(t, d, pane, "p2")
	if !strings.Contains(pane.actions[pasted], "msg=m1 ") {
		t.Fatalf("the probe is not the held message: %q", pane.actions[pasted])
	}
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: now, Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p2"}})
	if st := status(t, d, "m1"); st.State != inbox.StateProcessed {
		t.Fatalf("m1 after its probe went through: %+v", st)
	}
	if hb, _ := d.S.HeartbeatFile().Read(); hb.Fault != "" {
		t.Fatalf("the outage outlived a turn that went through: %+v", hb)
	}
	deliverAndTake(t, d, pane, "p3")
	if st := status(t, d, "m2"); st.State != inbox.StateSubmitted {
		t.Fatalf("m2 after the outage: %+v", st)
	}
}

// loopAnswers plays the loop's part for pane watches until settled says the
// driver is done with them: each watch's answer runs its continuation.
func loopAnswers(t *testing.T, d *Driver, settled func() bool) {
	t.Helper()
	for !settled() {
		select {
		case a := <-d.paneDone:
			d.onPaneAnswer(a)
		case <-time.After(30 * time.Second): // a watch's own limit is 10 s at most
			t.Fatal("no pane watch answered")
		}
	}
}

// submitNow runs a turn boundary and plays the loop's part for the pane
// watches it started (a paste's settle before its Enter), so the transcript
// reads as the loop would have it once they answered.
func submitNow(t *testing.T, d *Driver) {
	t.Helper()
	d.maybeSubmit()
	answerWatches(t, d)
}

// answerWatches plays the loop's part for every pane watch under way.
func answerWatches(t *testing.T, d *Driver) {
	t.Helper()
	loopAnswers(t, d, func() bool { return d.watching == 0 })
}

// cancelAndWait runs `seat cancel` on the turn in flight, plays the loop's
// part for its pane watches, and fails unless the cancel answered it held.
func cancelAndWait(t *testing.T, d *Driver) {
	t.Helper()
	answered, answer := false, error(nil)
	d.cancelTurn(inbox.ReasonCancelled, func(err error) { answered, answer = true, err })
	loopAnswers(t, d, func() bool { return answered })
	if answer != nil {
		t.Fatalf("cancel answered %v", answer)
	}
}

// TestACancelEscapesTheTurnOnce: `seat cancel` on a running turn sends one
// Escape (never C-c, which quits on a second press; never two, which open
// the rewind menu), watches the pane go idle, clears the box, fails the
// message as cancelled and answers the request; the queue then moves on. A
// turn end that arrives later for the cancelled prompt changes nothing.
func TestACancelEscapesTheTurnOnce(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = busyAdapter{}
	queue(t, d, "m1", "work m1")
	queue(t, d, "m2", "work m2")
	deliverAndTake(t, d, pane, "p1")
	pane.show(busyScreen)
	pane.react = map[string]string{"Escape": idleScreen}
	before := len(pane.did())

	cancelAndWait(t, d)
	if got := pane.did()[before:]; strings.Join(got, "|") != "keys Escape|keys C-u" {
		t.Fatalf("cancel's pane actions: %q, want one Escape and the box cleared", got)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled {
		t.Fatalf("m1 after the cancel: %+v", st)
	}

	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(), Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1"}})
	if st := status(t, d, "m1"); st.State != inbox.StateFailed {
		t.Fatalf("a late Stop changed the cancelled message: %+v", st)
	}
	deliverAndTake(t, d, pane, "p2")
	if st := status(t, d, "m2"); st.State != inbox.StateSubmitted {
		t.Fatalf("m2 after the cancel: %+v", st)
	}
}

// boxAdapter is busyAdapter that can read its input box (the text after "> "
// between the rules), as Claude Code's adapter can.
type boxAdapter struct{ busyAdapter }

func (boxAdapter) Caps() harness.Capabilities {
	return harness.Capabilities{Composer: func(screen string) (string, bool) {
		box, ok := panetext.BetweenLastRules(screen, panetext.IsRule)
		return strings.TrimSpace(panetext.BoxText(box, ">")), ok
	}}
}

// TestACancelWaitsOutTheHarnessRedrawing pins what a loaded machine showed
// on Claude Code 2.1.328 (2026-12-04, six CPU-burning loops): after the
// Escape one frame looked idle while the turn ran on, and the interrupted
// prompt came back into the input box a few hundred milliseconds after the
// pane went idle. The cancel must not take the stray frame for the turn's
// end (no key while the turn still runs), and must clear the put-back prompt
// before it answers: a prompt left there joins the next message's paste.
func TestACancelWaitsOutTheHarnessRedrawing(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	queue(t, d, "m1", "slow work")
	deliverAndTake(t, d, pane, "p1")
	const stray = "──────\n> \n──────\n(redrawing)"
	putBack := strings.Replace(idleScreen, "> ", "> [Pasted text #3 +3 lines]", 1)
	pane.show(busyScreen)
	// One capture per look (every 100 ms): the stray frame, the turn still
	// running, then idle; and once the box is first cleared, four more looks
	// of an empty box before the prompt comes back (≈ 400 ms).
	pane.then = map[string][]string{
		"Escape": {stray, busyScreen, busyScreen, idleScreen},
		"C-u":    {idleScreen, idleScreen, idleScreen, idleScreen, putBack},
	}
	pane.react = map[string]string{"C-u": idleScreen}
	before := len(pane.did())

	cancelAndWait(t, d)
	pane.mu.Lock()
	acts, shown, last := pane.actions[before:], pane.shown[before:], pane.screen
	if n := len(pane.frames); n > 0 {
		last = pane.frames[n-1] // what the pane goes on to show: the harness's redraw was not looked at
	}
	pane.mu.Unlock()
	for i, a := range acts {
		if a != "keys Escape" && (shown[i] == stray || shown[i] == busyScreen) {
			t.Errorf("%q sent while the turn still ran (the pane showed %q): the cancel took a stray frame for the turn's end", a, shown[i])
		}
	}
	if strings.Count(strings.Join(acts, "|"), "Escape") != 1 {
		t.Errorf("cancel's pane actions %q: want exactly one Escape", acts)
	}
	if last != idleScreen {
		t.Errorf("the cancel answered with the input box showing %q: the put-back prompt would join the next paste", last)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled {
		t.Fatalf("m1 after the cancel: %+v", st)
	}
}
