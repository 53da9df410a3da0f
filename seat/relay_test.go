package seat_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// person is a terminal attached to the seat's session: a real tmux client
// running inside a pane of a second private tmux server.
type person struct {
	t      *testing.T
	viewer *tmux.Client
	pane   tmux.Pane
}

func attach(t *testing.T, h *seattest.Harness, readOnly bool) *person {
	t.Helper()
	viewer := tmuxtest.Server(t)
	argv := []string{"env", "-u", "TMUX", "tmux", "-u", "-S", h.Socket, "attach-session", "-t", "=" + h.Name}
	if readOnly {
		argv = append(argv[:7], "attach-session", "-r", "-t", "="+h.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := viewer.NewSession(ctx, tmux.NewSessionOpts{Name: "person", Dir: h.Work, Argv: argv})
	if err != nil {
		t.Fatal(err)
	}
	return &person{t: t, viewer: viewer, pane: p}
}

func (p *person) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.viewer.KillSession(ctx, "person")
}

func (p *person) typeText(s string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.viewer.SendLiteral(ctx, p.pane.ID, s); err != nil {
		p.t.Fatal(err)
	}
}

func mode(h *seattest.Harness) state.Mode {
	m, _ := h.Seat().ModeFile().Read()
	return m
}

// beats waits for n more heartbeats: a bounded, event-driven way to give the
// driver time to (not) act.
func beats(h *seattest.Harness, n int) {
	start, _ := h.Seat().HeartbeatFile().Read()
	seen, last := 0, start.At
	h.WaitFor("heartbeats", 20*time.Second, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		if err == nil && hb.At.After(last) {
			seen++
			last = hb.At
		}
		return seen >= n
	})
}

func relaySeat(t *testing.T, name string) *seattest.Harness {
	h := seattest.New(t, name, seattest.TOML(`heartbeat_interval = "300ms"`))
	h.Start()
	return h
}

func TestRelayQueuesWhileAPersonIsAttachedAndResumesOnDetach(t *testing.T) {
	t.Parallel()
	h := relaySeat(t, "relay")
	p := attach(t, h, false)
	h.WaitFor("relay mode", 15*time.Second, func() bool { return mode(h).Mode == state.ModeRelay })
	h.Send("r1", "first while attached")
	h.Send("r2", "second while attached")
	beats(h, 3)
	for _, id := range []string{"r1", "r2"} {
		if st := h.Status(id); st.State != inbox.StateQueued {
			t.Fatalf("%s is %s while a person is attached, want queued", id, st.State)
		}
	}
	if n := len(h.ModelTurns()); n != 0 {
		t.Fatalf("%d messages reached the model during relay", n)
	}
	p.leave()
	h.WaitFinal(30*time.Second, "r1", "r2")
	turns := h.ModelTurns()
	if turns["r1"] != 1 || turns["r2"] != 1 {
		t.Fatalf("after detach: %v, want each once", turns)
	}
	var order []string
	for _, r := range h.Requests() {
		if r.Kind == "turn" {
			order = append(order, r.MsgID())
		}
	}
	if len(order) != 2 || order[0] != "r1" {
		t.Fatalf("delivery order %v", order)
	}
	if m := mode(h); m.Mode != state.ModeDirect {
		t.Fatalf("mode after detach: %+v", m)
	}
}

func TestRelayEndsWhenTheAttachedTerminalCrashes(t *testing.T) {
	t.Parallel()
	h := relaySeat(t, "crashrelay")
	attach(t, h, false)
	h.WaitFor("relay mode", 15*time.Second, func() bool { return mode(h).Mode == state.ModeRelay })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	clients, err := h.Tmux().Clients(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, c := range clients {
		if !c.ControlMode {
			syscall.Kill(c.PID, syscall.SIGKILL)
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("found %d typing clients, want 1: %+v", killed, clients)
	}
	h.WaitFor("direct mode after the client crashed", 15*time.Second, func() bool { return mode(h).Mode == state.ModeDirect })
	h.Send("after", "work")
	h.WaitFinal(30*time.Second, "after")
}

func TestReadOnlyClientDoesNotEnterRelay(t *testing.T) {
	t.Parallel()
	h := relaySeat(t, "ro")
	attach(t, h, true)
	h.WaitFor("the read-only client to attach", 15*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cs, _ := h.Tmux().Clients(ctx)
		for _, c := range cs {
			if c.ReadOnly {
				return true
			}
		}
		return false
	})
	h.Send("m1", "work while someone watches")
	h.WaitFinal(30*time.Second, "m1")
	if m := mode(h); m.Mode == state.ModeRelay {
		t.Fatalf("a read-only client switched the seat to relay: %+v", m)
	}
}

func TestSubmissionInFlightAtAttachFinishes(t *testing.T) {
	t.Parallel()
	h := relaySeat(t, "inflight")
	h.Send("slow", "[sim:slow=2s] long work")
	h.WaitState("slow", inbox.StateSubmitted, 15*time.Second)
	p := attach(t, h, false)
	h.WaitFor("relay mode", 15*time.Second, func() bool { return mode(h).Mode == state.ModeRelay })
	h.Send("later", "queued behind the person")
	h.WaitFinal(30*time.Second, "slow")
	if st := h.Status("slow"); st.State != inbox.StateProcessed {
		t.Fatalf("the in-flight message: %+v", st)
	}
	if st := h.Status("later"); st.State != inbox.StateQueued {
		t.Fatalf("later is %s during relay", st.State)
	}
	p.leave()
	h.WaitFinal(30*time.Second, "later")
}

// A draft the person left in the input box is never wiped: the queue waits
// until the box is empty.
func TestDraftLeftInTheBoxHoldsTheQueue(t *testing.T) {
	t.Parallel()
	h := relaySeat(t, "draft")
	p := attach(t, h, false)
	h.WaitFor("relay mode", 15*time.Second, func() bool { return mode(h).Mode == state.ModeRelay })
	p.typeText("half-written thought")
	h.WaitFor("the draft on screen", 10*time.Second, func() bool {
		return contains(h.Screen(), "half-written thought")
	})
	h.Send("d1", "board work")
	p.leave()
	h.WaitFor("the draft to hold the queue", 15*time.Second, func() bool { return mode(h).Draft != "" })
	beats(h, 3)
	if st := h.Status("d1"); st.State != inbox.StateQueued {
		t.Fatalf("d1 is %s while a draft is in the box", st.State)
	}
	if !contains(h.Screen(), "half-written thought") {
		t.Fatal("the draft was wiped")
	}
	// The person clears it (C-u in the pane): the queue resumes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	h.Tmux().SendKeys(ctx, h.Session().PaneID, "C-u")
	cancel()
	h.WaitFinal(30*time.Second, "d1")
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}
