package seat_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// TestTheLoopRunsWhileTheInputBoxIsLookedFor: a harness that fires
// SessionStart before it draws its input box (the simulator with
// PANTTY_SIM_BOX, as Claude Code does for about 260 ms) is ready only once
// the pane shows the box, and meanwhile the driver's loop keeps running: a
// hook event that arrives then is consumed before the seat turns ready (the
// heartbeat still says starting, `seat start` has not returned). Before the
// pane watch the loop sat in the look and consumed it only after.
func TestTheLoopRunsWhileTheInputBoxIsLookedFor(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "latebox", seattest.Env(map[string]string{"PANTTY_SIM_BOX": "4s"}))
	started := make(chan seattest.Result, 1)
	go func() { started <- h.Run("seat", "start", h.Name) }()
	s := h.Seat()
	h.WaitFor("SessionStart consumed", 30*time.Second, func() bool {
		names, _ := filepath.Glob(filepath.Join(s.SeenDir(), "*-SessionStart.json"))
		return len(names) > 0
	})
	// A hook event now, through the hook door the harness uses.
	notifyAndWaitConsumed(t, h)
	select {
	case r := <-started:
		t.Fatalf("seat start returned before the driver consumed an event that came while it looked for the box: %s", r)
	default:
	}
	if hb, err := s.HeartbeatFile().Read(); err != nil || hb.Phase != state.PhaseStarting {
		t.Errorf("heartbeat %+v, %v while the box is not drawn; want phase %s", hb, err, state.PhaseStarting)
	}
	if r := <-started; r.Code != 0 {
		t.Fatalf("seat start: %s", r)
	}
	h.Send("after", "the first message once the box is there")
	h.WaitFinal(20*time.Second, "after")
	if st := h.Status("after"); st.State != inbox.StateProcessed || st.Attempts != 1 {
		t.Errorf("after: %s after %d attempts, want processed once", st.State, st.Attempts)
	}
}

// TestTheLoopRunsWhileACancelWatchesThePane: a cancel whose Escape does not
// stop the turn (the simulator with PANTTY_SIM_BROKEN=escape) watches the
// pane for up to 10 s; meanwhile the loop consumes a hook event, and when the
// look ends the cancel is answered "did not stop", the message still in
// flight and its turn going on.
func TestTheLoopRunsWhileACancelWatchesThePane(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "stuckesc", seattest.Env(map[string]string{"PANTTY_SIM_BROKEN": "escape", "PANTTY_SIM_TURN": "40s"}))
	h.Start()
	h.Send("slow", "a turn Escape does not stop")
	h.WaitState("slow", inbox.StateSubmitted, 20*time.Second)
	// The pane must show the turn before the cancel: a cancel that finds no
	// running turn on the pane after its Escape takes it as stopped (the
	// simulator draws its turn a moment after UserPromptSubmit; under CI's
	// load the cancel came first once).
	h.WaitFor("the turn on the pane", 20*time.Second, func() bool { return strings.Contains(h.Screen(), "esc to interrupt") })
	answered := make(chan seattest.Result, 1)
	go func() { answered <- h.Run("seat", "cancel", h.Name) }()
	s := h.Seat()
	h.WaitFor("the cancel's Escape", 20*time.Second, func() bool {
		hb, err := s.HeartbeatFile().Read()
		return err == nil && hb.Phase == string(machine.Cancelling)
	})
	notifyAndWaitConsumed(t, h)
	select {
	case r := <-answered:
		t.Fatalf("the cancel was answered before the driver consumed an event that came while it watched the pane: %s", r)
	default:
	}
	r := <-answered
	if r.Code == 0 || !strings.Contains(r.Stderr+r.Stdout, "did not stop") {
		t.Errorf("seat cancel of a turn Escape does not stop: %s; want refused, naming that it did not stop", r)
	}
	if st := h.Status("slow"); st.State != inbox.StateSubmitted {
		t.Errorf("slow is %s (%s) after a cancel that did not hold; want still submitted", st.State, st.Reason)
	}
}

// notifyAndWaitConsumed sends a Notification hook event through the hook
// door the harness uses and waits until the driver has consumed it.
func notifyAndWaitConsumed(t *testing.T, h *seattest.Harness) {
	t.Helper()
	payload := fmt.Sprintf(`{"hook_event_name":"Notification","session_id":%q,"notification_type":"idle_prompt","message":"waiting"}`, h.Session().ID)
	if r := h.RunStdin(payload, "hook", "--seat", h.Name); r.Code != 0 {
		t.Fatalf("pantty hook: %s", r)
	}
	h.WaitFor("the Notification consumed", 30*time.Second, func() bool {
		names, _ := filepath.Glob(filepath.Join(h.Seat().SeenDir(), "*-Notification.json"))
		return len(names) > 0
	})
}
