package seat_test

import (
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

func TestSmokeStartSendProcessStop(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "smoke")
	h.Start()
	h.Send("m1", "hello there")
	h.Send("m2", "/clear")
	h.WaitFinal(30*time.Second, "m1", "m2")
	turns := h.ModelTurns()
	if turns["m1"] != 1 || turns["m2"] != 1 {
		t.Fatalf("model turns: %v", turns)
	}
	if r := h.Run("seat", "stop", "smoke"); r.Code != 0 {
		t.Fatalf("stop: %s", r)
	}
}
