package seat_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
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
	payload := fmt.Sprintf(`{"hook_event_name":"Notification","session_id":%q,"notification_type":"idle_prompt","message":"waiting"}`, h.Session().ID)
	if r := h.RunStdin(payload, "hook", "--seat", h.Name); r.Code != 0 {
		t.Fatalf("pantty hook: %s", r)
	}
	h.WaitFor("the Notification consumed", 30*time.Second, func() bool {
		names, _ := filepath.Glob(filepath.Join(s.SeenDir(), "*-Notification.json"))
		return len(names) > 0
	})
	select {
	case r := <-started:
		t.Fatalf("seat start returned before the driver consumed an event that came while it looked for the box: %s", r)
	default:
	}
	if hb, err := s.ReadHeartbeat(); err != nil || hb.Phase != seat.PhaseStarting {
		t.Errorf("heartbeat %+v, %v while the box is not drawn; want phase %s", hb, err, seat.PhaseStarting)
	}
	if r := <-started; r.Code != 0 {
		t.Fatalf("seat start: %s", r)
	}
	h.Send("after", "the first message once the box is there")
	h.WaitFinal(20*time.Second, "after")
	if st := h.Status("after"); st.State != seat.StateProcessed || st.Attempts != 1 {
		t.Errorf("after: %s after %d attempts, want processed once", st.State, st.Attempts)
	}
}
