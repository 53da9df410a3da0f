package seat_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

func stepSeat(t *testing.T, name string) *seattest.Harness {
	h := seattest.New(t, name)
	path := h.Seat().ConfigPath()
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `shape = "resident"`, `shape = "step"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

// Each step runs in a fresh session that starts from the handoff: no context
// accumulates, and what the previous steps did is carried by the handoff.
func TestStepShapeRunsEachStepInAFreshSessionWithTheHandoff(t *testing.T) {
	t.Parallel()
	h := stepSeat(t, "steps")
	h.Start()
	for _, id := range []string{"s1", "s2", "s3"} {
		h.Send(id, "step "+id)
	}
	h.WaitFinal(60*time.Second, "s1", "s2", "s3")
	sessions := map[string]bool{}
	for _, r := range h.Requests() {
		if r.Kind != "turn" {
			continue
		}
		sessions[r.SessionID] = true
		if r.HistoryTurns != 0 {
			t.Fatalf("step %s ran with %d earlier turns in its session: context accumulated", r.MsgID(), r.HistoryTurns)
		}
		if r.MsgID() == "s3" && !strings.Contains(r.Injected, "s2: processed") {
			t.Fatalf("step s3 did not start from a handoff naming s2's outcome: injected=%q", r.Injected)
		}
	}
	if len(sessions) != 3 {
		t.Fatalf("%d sessions for 3 steps, want 3", len(sessions))
	}
	if g := h.Session().Generation; g != 3 {
		t.Fatalf("generation %d after 3 steps, want 3", g)
	}
	if !strings.Contains(h.Session().Why, "step") {
		t.Fatalf("session.toml does not say why the generation began: %q", h.Session().Why)
	}
}

// A crash in a step: re-read and continue from the last completed step.
func TestStepShapeCrashContinuesFromTheLastCompletedStep(t *testing.T) {
	t.Parallel()
	h := stepSeat(t, "stepcrash")
	h.Start()
	h.Send("s1", "step one")
	h.Send("s2", "[sim:crash] step two")
	h.Send("s3", "step three")
	h.WaitFinal(90*time.Second, "s1", "s2", "s3")
	if st := h.Status("s1"); st.State != inbox.StateProcessed {
		t.Fatalf("s1: %+v", st)
	}
	if st := h.Status("s2"); st.State != inbox.StateFailed || st.Reason != inbox.ReasonLost {
		t.Fatalf("s2: %+v, want failed %s after one marked resubmission", st, inbox.ReasonLost)
	}
	if st := h.Status("s3"); st.State != inbox.StateProcessed {
		t.Fatalf("s3: %+v", st)
	}
	if n := h.ModelTurns()["s1"]; n != 1 {
		t.Fatalf("s1 reached the model %d times", n)
	}
}
