package seat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

// requestKinds counts the simulator's request-log rows of kind whose input is
// text: what the harness itself received, not what pantty recorded.
func requestKinds(h *seattest.Harness, kind, text string) int {
	n := 0
	for _, q := range h.Requests() {
		if q.Kind == kind && (text == "" || q.NewInput == text) {
			n++
		}
	}
	return n
}

// A compaction right after a compaction: the harness fires PreCompact, answers
// "Not enough messages to compact." and fires no PostCompact (as Claude Code
// 2.1.328 does). The cycle and the bare command both fail with exit 1 and the
// harness's own words, instead of waiting out the compaction timeout (5
// minutes); only one compaction reached the model.
func TestCompactRightAfterCompactIsRefusedInTheHarnessWords(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "twice")
	h.Start()
	h.Send("m1", "first piece of work")
	h.WaitFinal(30*time.Second, "m1")
	if r := h.Run("seat", "compact", "twice"); r.Code != 0 {
		t.Fatalf("first seat compact: %s\n%s", r, h.DriverLog())
	}
	// A new note changes the handoff, so pantty's own check lets the cycle reach /compact.
	if r := h.RunStdin("", "handoff", "note", "--seat", "twice", "run the linter first"); r.Code != 0 {
		t.Fatalf("handoff note: %s", r)
	}
	r := h.Run("seat", "compact", "twice")
	if r.Code != 1 || !strings.Contains(r.Stderr, "Not enough messages to compact.") {
		t.Fatalf("second seat compact: want exit 1 with the harness's words, got %s\n%s", r, h.DriverLog())
	}
	if c, err := h.Seat().CycleFile().Read(); err != nil || c.State != "failed" || !strings.Contains(c.Error, "Not enough messages") || c.PostCompact != "" {
		t.Fatalf("cycle record %+v %v: want failed with the harness's words and no PostCompact", c, err)
	}
	r = h.Run("seat", "command", "twice", "--", "/compact")
	if r.Code != 1 || !strings.Contains(r.Stderr, "Not enough messages to compact.") {
		t.Fatalf("seat command -- /compact: want exit 1 with the harness's words, got %s", r)
	}
	if n, refused := requestKinds(h, "compact", ""), requestKinds(h, "compact-refused", ""); n != 1 || refused != 2 {
		t.Fatalf("%d compactions and %d refusals reached the harness, want 1 and 2", n, refused)
	}
	// The seat goes on working, and after a turn there is something to compact again.
	h.Send("m2", "second piece of work")
	h.WaitFinal(30*time.Second, "m2")
	if r := h.Run("seat", "command", "twice", "--", "/compact"); r.Code != 0 || !strings.Contains(r.Stdout, "PostCompact") {
		t.Fatalf("seat command -- /compact after a turn: want exit 0 on the PostCompact hook, got %s", r)
	}
}

// A command with no hook of its own is taken on the harness's recorded answer:
// the exit status says it ran, and the output names what the harness printed.
func TestCommandReportsTheHarnessAnswer(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ctxcmd", seattest.Env(map[string]string{"PANTTY_SIM_FLOOR": "9000"}))
	h.Start()
	r := h.Run("seat", "command", "ctxcmd", "--", "/context")
	// The whole answer, not its first line (the title).
	if r.Code != 0 || !strings.Contains(r.Stdout, "Context Usage") || !strings.Contains(r.Stdout, "(floor): 9000 tokens") || !strings.Contains(r.Stdout, "Free space:") {
		t.Fatalf("seat command -- /context: want exit 0 and the harness's whole answer, got %s", r)
	}
}

// A command never lands in a busy composer: with a person's draft in the input
// box, or a person's turn running, the command door waits and then refuses
// unsent, naming why; the draft is left as the person typed it and nothing
// reached the harness. Once the box is free the same command runs.
func TestCommandIsNotPastedIntoABusySeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "busy", seattest.TOML(`heartbeat_interval = "1s"`))
	h.Start()
	pane := h.Session().PaneID
	h.CommandSparesDraft(seattest.Composer, "/context")
	if n := requestKinds(h, "command", "/context"); n != 0 {
		t.Fatalf("/context reached the harness %d times while a draft was in the box", n)
	}

	// A person's own turn (typed at the pane) keeps the seat busy.
	if err := h.Tmux().SendKeys(t.Context(), pane, "C-u"); err != nil {
		t.Fatal(err)
	}
	h.PasteRaw("a person asks something slow [sim:hang]")
	h.WaitFor("the person's turn to run", 10*time.Second, func() bool {
		return strings.Contains(h.Screen(), "esc to interrupt")
	})
	r := h.Run("seat", "command", "busy", "--wait", "1s", "--", "/context")
	if r.Code != 1 || !strings.Contains(r.Stderr, "not sent") {
		t.Fatalf("command into a running turn: want exit 1 refusing unsent, got %s", r)
	}
	if n := requestKinds(h, "command", "/context"); n != 0 {
		t.Fatalf("/context reached the harness %d times during a person's turn", n)
	}
	if box, ok := seattest.Composer(h.Screen()); ok && strings.Contains(box, "/context") {
		t.Fatalf("/context was pasted into the composer of a busy seat: %q", box)
	}
	if err := h.Tmux().SendKeys(t.Context(), pane, "Escape"); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the person's turn to stop and the box to be clear", 10*time.Second, func() bool {
		s := h.Screen()
		if strings.Contains(s, "esc to interrupt") {
			return false
		}
		if box, _ := seattest.Composer(s); box != "" {
			h.Tmux().SendKeys(t.Context(), pane, "C-u")
			return false
		}
		return true
	})
	if r := h.Run("seat", "command", "busy", "--", "/context"); r.Code != 0 {
		t.Fatalf("command into the free seat: %s\n%s", r, h.DriverLog())
	}
	if n := requestKinds(h, "command", "/context"); n != 1 {
		t.Fatalf("/context reached the harness %d times, want 1", n)
	}
}

// A command the harness did not run is reported failed, never "sent": with
// dispatch off (PANTTY_SIM_SIGILS empty) the simulator takes "/compact" as a
// prompt for the model, as Codex does with "/compact TEXT"; no PreCompact comes
// within the accept window and the command door exits 1 naming what it missed.
func TestCommandTheHarnessDidNotRunIsReportedFailed(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "notrun", seattest.Env(map[string]string{"PANTTY_SIM_SIGILS": ""}))
	h.Start()
	r := h.Run("seat", "command", "notrun", "--", "/compact")
	if r.Code != 1 || !strings.Contains(r.Stderr, "no PreCompact hook within") || !strings.Contains(r.Stderr, "did not take /compact") {
		t.Fatalf("a /compact the harness did not run: want exit 1 naming the missing evidence, got %s", r)
	}
	if n := requestKinds(h, "compact", ""); n != 0 {
		t.Fatalf("%d compactions reached the harness", n)
	}
}
