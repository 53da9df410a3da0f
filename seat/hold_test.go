package seat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

// TestSendWaitSaysWhatHoldsTheSeat: a script blocked in `send --wait` on a
// seat that cannot process its message is told so in one line, with the
// command that lets it go on, and the wait keeps its exit code.
func TestSendWaitSaysWhatHoldsTheSeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "holds")
	w := h.RunStdin("never started", "seat", "send", h.Name, "--id", "a1", "--wait", "--timeout", "1s")
	if w.Code != 4 || !strings.Contains(w.Stderr, "no live driver runs; queued messages wait for one: pantty seat start "+h.Name) {
		t.Errorf("send --wait to a seat never started: %s", w)
	}
	h.Start()
	h.WaitFinal(20*time.Second, "a1")
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	w = h.RunStdin("after the stop", "seat", "send", h.Name, "--id", "a2", "--wait", "--timeout", "1s")
	if w.Code != 4 || !strings.Contains(w.Stderr, "the seat is stopped; queued messages wait for a start: pantty seat start "+h.Name) {
		t.Errorf("send --wait to a stopped seat: %s", w)
	}
	if n := strings.Count(w.Stderr, "is held:"); n != 1 {
		t.Errorf("the hold is said %d times, want once:\n%s", n, w.Stderr)
	}
}
