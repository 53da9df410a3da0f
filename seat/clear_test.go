package seat_test

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// A /clear pantty did not ask for (a person at the pane, or Gemini CLI's
// command completion turning a pasted /compress into /clear) starts a session
// the seat does not trust. The driver restores the recorded session: the
// harness is relaunched resuming it, and the next message is delivered there,
// once. Without the restore the message reaches the model in the cleared
// session (the request log's session id says which).
func TestUnaskedClearRestoresTheSeatsSession(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cleared")
	h.Start()
	before := h.Session()
	h.PasteRaw("/clear")
	h.WaitFor("the driver to restore the seat's session", wait, func() bool {
		return strings.Contains(h.DriverLog(), "restoring the seat's session "+before.ID)
	})
	h.WaitFor("the harness relaunched", wait, func() bool {
		s := h.Session()
		return s.PanePID != 0 && s.PanePID != before.PanePID && alive(s.PanePID)
	})
	h.Send("after-clear", "a message sent after the clear")
	h.WaitFinal(wait, "after-clear")
	if st := h.Status("after-clear"); st.State != inbox.StateProcessed {
		t.Fatalf("the message after the clear: %+v", st)
	}
	if n := h.ModelTurns()["after-clear"]; n != 1 {
		t.Fatalf("the message after the clear reached the model %d times, want once", n)
	}
	for _, rq := range h.Requests() {
		if rq.MsgID() == "after-clear" && rq.SessionID != before.ID {
			t.Fatalf("the message reached the model in session %s, not the seat's %s", rq.SessionID, before.ID)
		}
	}
	if got := h.Session().ID; got != before.ID {
		t.Fatalf("session.toml names %s after the restore, want the seat's %s", got, before.ID)
	}
}
