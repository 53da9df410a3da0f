package codex_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
)

// viewerReady starts r's app-server seat, runs one message so the viewer
// pane opens, and waits until it shows the thread Ready.
func viewerReady(t *testing.T, r *rig) string {
	t.Helper()
	r.Start()
	r.Send("p0", "first")
	r.Processed("p0")
	r.WaitFor("the viewer ready on the thread", 60*time.Second, func() bool {
		s := r.Session()
		return s.PaneID != "" && strings.Contains(r.Screen(), "Ready · "+s.ID)
	})
	return r.Session().PaneID
}

// boardTurnStreaming sends board message id, whose reply the stand-in
// streams over slow, and waits until the viewer shows its turn running.
func boardTurnStreaming(r *rig, id string, slow time.Duration) {
	r.T.Helper()
	r.Send(id, standinkit.SlowMarker(slow)+" a board turn")
	r.WaitState(id, inbox.StateSubmitted, 60*time.Second)
	r.WaitFor(id+"'s reply streaming in the viewer", 30*time.Second, func() bool {
		_, ok := r.Request(id)
		return ok && codex.Adapter{}.Busy(r.Screen())
	})
}

// personTypes types text into pane as a person does, then Enter after a
// pause (Enter straight after the text lands in the TUI's paste burst as a
// newline: e2e_attached_test.go, typeText).
func personTypes(t *testing.T, r *rig, pane, text string) {
	t.Helper()
	ctx := context.Background()
	if err := r.Tmux().SendLiteral(ctx, pane, text); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // a person's pause; see above
	enterUntilTaken(t, r.Screen, func() error { return r.Tmux().SendKeys(ctx, pane, "Enter") }, text)
}

// TestAppServerSeatPersonsEscapeDuringABoardTurn: a person presses Escape
// in the viewer while a board message's turn streams. The TUI interrupts
// the turn on the server; the driver sees turn/completed interrupted, not
// its own cancel, and fails the message saying so (a person's Escape is no
// `seat cancel`: the message is not marked cancelled), and the next
// message goes once.
func TestAppServerSeatPersonsEscapeDuringABoardTurn(t *testing.T) {
	r := newRig(t, "cxase", `transport = "app-server"`)
	pane := viewerReady(t, r)
	boardTurnStreaming(r, "e1", 20*time.Second)
	t0 := time.Now()
	if err := r.Tmux().SendKeys(context.Background(), pane, "Escape"); err != nil {
		t.Fatal(err)
	}
	r.WaitState("e1", inbox.StateFailed, 30*time.Second)
	t.Logf("e1 failed %s after the person's Escape", time.Since(t0).Round(time.Millisecond))
	if st := r.Status("e1"); st.Reason == inbox.ReasonCancelled || !strings.Contains(st.Detail, "interrupted (not by pantty") {
		t.Fatalf("e1 after a person's Escape: %+v\ndriver.log:\n%s", st, r.DriverLog())
	}
	r.Send("e2", "after the person's Escape")
	r.Processed("e2")
	if turns := r.Turns(); turns["e1"] != 1 || turns["e2"] != 1 {
		t.Fatalf("turns %v, want each once", turns)
	}
}

// TestAppServerSeatPersonsEnterDuringABoardTurn: a person sends a prompt
// from the viewer while a board message's turn streams. Codex steers it
// into the running turn (measured without the driver, docs/codex.md): it
// is a request of its own inside the board turn, with no turn of its own.
// The board message is processed once, with that turn's end (its reply
// is the answer to the person's text), and the queue is not held by the
// person's prompt after it: the next message goes once, at once (it had
// waited ~27 s for the heartbeat's check that no turn runs).
func TestAppServerSeatPersonsEnterDuringABoardTurn(t *testing.T) {
	r := newRig(t, "cxasp", `transport = "app-server"`)
	pane := viewerReady(t, r)
	boardTurnStreaming(r, "s1", 4*time.Second)
	personTypes(t, r, pane, "a person adds this")
	r.WaitFor("the person's prompt", 30*time.Second, func() bool {
		for _, ev := range r.Events(hookwire.EvUserPromptSubmit) {
			if strings.Contains(ev.Fields.Prompt, "a person adds this") {
				return true
			}
		}
		return false
	})
	r.Processed("s1")
	st := r.Status("s1")
	var personTurn string
	for _, ev := range r.Events(hookwire.EvUserPromptSubmit) {
		if _, _, _, ok := guard.MatchHeader(ev.Fields.Prompt); !ok && strings.Contains(ev.Fields.Prompt, "a person adds this") {
			personTurn = ev.Fields.PromptID
		}
	}
	t.Logf("s1: turn %s, the person's prompt in turn %s; reply %q", st.PromptID, personTurn, st.Reply)
	t1 := time.Now()
	r.Send("s2", "after the person's prompt")
	r.Processed("s2")
	t.Logf("s2 processed %s after its send", time.Since(t1).Round(time.Millisecond))
	// The person's prompt ended with the board turn it ran in: the queue is
	// not held until the heartbeat's check finds no turn running (~27 s).
	if log := r.DriverLog(); strings.Contains(log, "its end never came") || !strings.Contains(log, "steered into it") {
		t.Fatalf("the person's prompt held the queue past the board turn's end:\n%s", log)
	}
	persons := 0
	for _, q := range r.api.Requests() {
		if q.Kind == "turn" && strings.Contains(q.NewInput, "a person adds this") {
			persons++
		}
	}
	if turns := r.Turns(); turns["s1"] != 1 || turns["s2"] != 1 || persons != 1 {
		t.Fatalf("turns %v, the person's prompt in %d requests: want each once\ndriver.log:\n%s", turns, persons, r.DriverLog())
	}
}

// TestAppServerSeatPersonsEnterRacesABoardSubmission: a person's Enter at
// the viewer in the same instant as the driver's turn/start of a board
// message (the text typed first, the Enter sent right after `seat send`
// returned), three times. Whichever reaches the server first, the other is
// steered into its turn or starts its own: every board message reaches the
// model once and is processed, every person's prompt reaches it once, and
// the queue is never held past a turn's end.
func TestAppServerSeatPersonsEnterRacesABoardSubmission(t *testing.T) {
	r := newRig(t, "cxasx", `transport = "app-server"`)
	pane := viewerReady(t, r)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		id, person := fmt.Sprintf("x%d", i), fmt.Sprintf("a person races %d", i)
		if err := r.Tmux().SendLiteral(ctx, pane, person); err != nil {
			t.Fatal(err)
		}
		r.WaitFor("the person's text in the viewer's box", 10*time.Second, func() bool { return strings.Contains(r.Screen(), person) })
		time.Sleep(200 * time.Millisecond) // a person's pause before Enter (personTypes)
		enter := func() {
			if err := r.Tmux().SendKeys(ctx, pane, "Enter"); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 1 { // the board first, then the person's Enter; then the other way
			r.Send(id, "board message "+id)
			enter()
		} else {
			enter()
			r.Send(id, "board message "+id)
		}
		r.Processed(id)
		st := r.Status(id)
		r.WaitFor("the person's prompt at the model", 30*time.Second, func() bool {
			for _, q := range r.api.Requests() {
				if q.Kind == "turn" && strings.Contains(q.NewInput, person) {
					return true
				}
			}
			return false
		})
		t.Logf("%s: turn %s, evidence %s, reply %q", id, st.PromptID, st.Evidence, st.Reply)
	}
	r.Send("x4", "after the races")
	r.Processed("x4")
	persons := map[string]int{}
	for _, q := range r.api.Requests() {
		for i := 1; i <= 3; i++ {
			if p := fmt.Sprintf("a person races %d", i); q.Kind == "turn" && strings.Contains(q.NewInput, p) {
				persons[p]++
			}
		}
	}
	turns := r.Turns()
	for _, id := range []string{"x1", "x2", "x3", "x4"} {
		if turns[id] != 1 {
			t.Errorf("%s reached the model %d times", id, turns[id])
		}
	}
	if len(persons) != 3 || persons["a person races 1"] != 1 || persons["a person races 2"] != 1 || persons["a person races 3"] != 1 {
		t.Errorf("the person's prompts at the model: %v, want each once", persons)
	}
	if log := r.DriverLog(); strings.Contains(log, "its end never came") || strings.Contains(log, seat.UnnamedTransition) {
		t.Errorf("driver.log:\n%s", log)
	}
}
