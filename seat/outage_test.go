package seat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A message the provider fails every time (a 5xx on each try, in Claude Code
// 2.1.328's words through the simulator) goes back to the queue only
// [recovery] transient_attempts times, then fails transient-exhausted in the
// provider's words, and the queue behind it runs; `seat retry` queues it again
// with its count cleared. Without the bound one such request held the queue for
// ever while recover said ok.
func TestTransientFailuresAreBoundedPerMessage(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "flaky", seattest.TOML(`[recovery]`, `backoff = "100ms"`, `backoff_max = "200ms"`, `transient_attempts = 3`))
	h.Start()
	h.Send("m1", "[sim:5xx] the provider fails this request every time")
	h.Send("m2", "the message behind it")
	h.WaitFinal(60*time.Second, "m1", "m2")
	st := h.Status("m1")
	if st.State != inbox.StateFailed || st.Reason != hookwire.ReasonTransientExhausted || st.Transients != 3 ||
		!strings.Contains(st.Detail, "500 Internal server error") {
		t.Fatalf("m1 after 3 provider errors: %+v", st)
	}
	if got := h.ModelTurns()["m1"]; got != 3 {
		t.Fatalf("m1 reached the model %d times, want 3 (one per attempt)", got)
	}
	if st := h.Status("m2"); st.State != inbox.StateProcessed {
		t.Fatalf("m2 behind the exhausted message: %+v\ndriver.log:\n%s", st, h.DriverLog())
	}
	if res := h.Run("seat", "retry", h.Name, "m1"); res.Code != 0 {
		t.Fatalf("seat retry m1: %s", res)
	}
	st = h.WaitState("m1", inbox.StateFailed, 60*time.Second)
	if st.Retries != 1 || st.Transients != 3 {
		t.Fatalf("m1 retried: want a fresh count of 3 attempts after 1 retry, got %+v", st)
	}
}

// While the driver tries a held message again during a transient outage, the
// phase is the probe's own (in-turn), not waiting-retry: `pantty status` and
// `pantty recover` must still name the outage in the harness's words, from the
// heartbeat's fault. (Codex's e2e outage test failed when its checks happened
// to run during a probe.) The simulator's failing turn lasts its slow marker,
// so the probe is held open long enough to look at.
func TestAnOutageIsNamedWhileTheHeldMessageIsTriedAgain(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "probe", seattest.TOML(`[recovery]`, `backoff = "200ms"`, `backoff_max = "200ms"`, `transient_attempts = 5`))
	h.Start()
	h.Send("m1", "[sim:5xx][sim:slow=5s] the provider fails this request")
	words := "500 Internal server error"
	h.WaitFor("a probe of the held message while the outage is recorded", 30*time.Second, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Fault == machine.ClassTransient && hb.Phase == state.PhaseInTurn
	})
	status := h.Run("status", h.Name)
	sweep := h.Run("recover", "--json")
	if hb, _ := h.Seat().HeartbeatFile().Read(); hb.Phase != state.PhaseInTurn {
		t.Skipf("the probe ended before both looked (phase %s): nothing to judge", hb.Phase)
	}
	if !strings.Contains(status.Stdout, words) {
		t.Errorf("status during the probe does not name the outage:\n%s", status)
	}
	if !strings.Contains(sweep.Stdout, words) || !strings.Contains(sweep.Stdout, `"verdict": "ok"`) {
		t.Errorf("recover during the probe: want ok naming the outage:\n%s", sweep)
	}
}
