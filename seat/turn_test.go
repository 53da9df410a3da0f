package seat_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
)

func turnSeat(t *testing.T, name string, opts ...seattest.Option) *seattest.Harness {
	h := seattest.New(t, name, opts...)
	path := h.Seat().ConfigPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), `shape = "resident"`, `shape = "turn"`, 1)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// One process per message, resuming the same session: each later turn carries
// the earlier conversation, and the envelope decides each outcome.
func TestTurnShapeRunsOneProcessPerMessageOnOneSession(t *testing.T) {
	t.Parallel()
	h := turnSeat(t, "turn")
	h.Start()
	for _, id := range []string{"t1", "t2", "t3"} {
		h.Send(id, "turn work "+id)
	}
	h.WaitFinal(60*time.Second, "t1", "t2", "t3")
	sess := h.Session()
	var hist []int
	for _, r := range h.Requests() {
		if r.Kind == "turn" {
			if r.SessionID != sess.ID {
				t.Fatalf("turn on session %s, want %s", r.SessionID, sess.ID)
			}
			hist = append(hist, r.HistoryTurns)
		}
	}
	if len(hist) != 3 || hist[0] != 0 || hist[1] != 1 || hist[2] != 2 {
		t.Fatalf("history per turn %v, want [0 1 2] (resumed each time)", hist)
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		if st := h.Status(id); st.State != inbox.StateProcessed || !strings.Contains(st.TurnEnd, "envelope: success, 1 turn") {
			t.Fatalf("%s: %+v", id, st)
		}
	}
	if sess.Launches != 3 {
		t.Fatalf("%d harness processes, want 3", sess.Launches)
	}
}

// A "success" with zero model turns is not processing: here the simulator is
// set to dispatch '[', the guard's own first character (a harness that changed
// under a stale measurement), so the guarded text never reaches the model.
func TestTurnShapeZeroTurnSuccessIsNotProcessed(t *testing.T) {
	t.Parallel()
	h := turnSeat(t, "zero", seattest.Env(map[string]string{"PANTTY_SIM_SIGILS": "["}))
	h.Start()
	h.Send("z1", "anything")
	st := h.WaitState("z1", inbox.StateFailed, 30*time.Second)
	if st.Reason != hookwire.ReasonNoTurn {
		t.Fatalf("z1: %+v, want failed %s", st, hookwire.ReasonNoTurn)
	}
	if n := h.ModelTurns()["z1"]; n != 0 {
		t.Fatalf("z1 reached the model %d times", n)
	}
}

func TestTurnShapeCrashAndCeiling(t *testing.T) {
	t.Parallel()
	h := turnSeat(t, "tcrash", seattest.TOML(`turn_ceiling = "2s"`))
	h.Start()
	h.Send("crash", "[sim:crash] work")
	h.Send("slow", "[sim:slow=30s] work")
	h.Send("after", "ordinary work")
	h.WaitFinal(60*time.Second, "crash", "slow", "after")
	if st := h.Status("crash"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonWorkError || !strings.Contains(st.Detail, "no result envelope") {
		t.Fatalf("crash: %+v", st)
	}
	if st := h.Status("slow"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonCeiling {
		t.Fatalf("slow: %+v", st)
	}
	if st := h.Status("after"); st.State != inbox.StateProcessed {
		t.Fatalf("after: %+v", st)
	}
}

// A turn-spawned message whose turn fails on an outage (here a 5xx, transient)
// is not failed: it goes back to the queue, is retried after the backoff, and
// is processed by exactly one answered turn once the provider is back.
func TestTurnShapeOutageRequeues(t *testing.T) {
	t.Parallel()
	h := turnSeat(t, "turn-5xx", seattest.TOML(`[recovery]`, `backoff = "1s"`, `backoff_max = "1s"`))
	h.Start()
	until := time.Now().Add(3 * time.Second).Unix()
	h.Send("o1", "[sim:5xx][sim:until="+strconv.FormatInt(until, 10)+"] during a provider outage")
	h.Send("o2", "behind it")
	h.WaitFor("o1 back in the queue as transient", 30*time.Second, func() bool {
		st := h.Status("o1")
		return st.State == inbox.StateQueued && st.Reason == hookwire.ReasonTransient
	})
	h.WaitFinal(60*time.Second, "o1", "o2")
	answered := h.AnsweredTurns()
	for _, id := range []string{"o1", "o2"} {
		if st := h.Status(id); st.State != inbox.StateProcessed || answered[id] != 1 {
			t.Fatalf("%s: %+v, %d answered turns", id, st, answered[id])
		}
	}
	if st := h.Status("o1"); st.Attempts < 2 {
		t.Fatalf("o1 went through in %d attempt(s): the outage was never seen", st.Attempts)
	}
}
