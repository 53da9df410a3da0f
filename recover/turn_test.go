package recover_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat"
)

// A turn seat runs one harness process per message and has no pane between
// turns: recover judges it by its driver, not by a pane. An idle, healthy
// turn seat is ok and its driver is left alone (before, every sweep called it
// dead, "pane  of tmux session … is gone", and replaced its driver); a turn
// seat whose driver was killed is revived and the revival verified without a
// pane to look at.
func TestTurnSeatIsJudgedByItsDriverNotAPane(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "turny")
	path := h.Seat().ConfigPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `shape = "resident"`, `shape = "turn"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Start()
	h.Send("t1", "one turn of work")
	h.WaitFinal(wait, "t1")
	o := h.Owner()

	for i := 0; i < 2; i++ {
		rep, r := sweep(t, h)
		if s := seatIn(t, rep, "turny"); r.Code != 0 || s.Verdict != recover.OK {
			t.Fatalf("sweep %d of an idle turn seat: exit %d, %+v; want ok", i+1, r.Code, s)
		}
	}
	if o2 := h.Owner(); o2.PID != o.PID || !o2.Live() {
		t.Fatalf("recover replaced a healthy turn seat's driver: %+v -> %+v", o, o2)
	}

	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver to die", wait, func() bool { return !alive(o.PID) })
	if !seat.WaitFree(h.Seat(), wait) {
		t.Fatal("owner.lock still held after the driver died")
	}
	seen := sweepUntil(t, h, "revived", okVerdict)
	if !strings.HasPrefix(seen[0].Result, "verified") {
		t.Fatalf("the first sweep did not revive the turn seat's driver:\n%s", describe(seen))
	}
	h.Send("t2", "a turn after the revival")
	h.WaitFinal(wait, "t2")
	exactlyOnce(t, h, "t1", "t2")
}
