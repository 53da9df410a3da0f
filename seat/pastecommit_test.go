package seat_test

// Enter on the paste's commit (docs/performance-history.md): on a harness measured to
// draw a paste only once it has taken it in (the simulator), Enter goes as
// soon as the box shows the paste and the pane is quiet, with paste_settle
// only a bound; and an Enter that still lands in the paste window (a paste
// slower than the bound) is covered by the Enter retry, as before.

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// TestEnterGoesOnThePastesCommit: with a 3 s paste_settle, the message is
// evidenced long before 3 s have passed since its paste (the fixed settle
// made every Enter wait the whole 3 s), once, with no Enter retry.
func TestEnterGoesOnThePastesCommit(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "commit", seattest.TOML(`paste_settle = "3s"`))
	h.Start()
	h.Send("c1", "entered on the paste's commit")
	h.WaitFinal(20*time.Second, "c1")
	st := h.Status("c1")
	if st.State != inbox.StateProcessed || st.Attempts != 1 {
		t.Fatalf("c1 is %s after %d paste(s), want processed after 1", st.State, st.Attempts)
	}
	a, err := h.Seat().ArtifactFile("c1", 1).Read()
	if err != nil {
		t.Fatal(err)
	}
	if took := st.SubmittedAt.Sub(a.SentAt); took >= 2*time.Second {
		t.Fatalf("evidence %s after the paste's record: Enter waited out the 3 s bound", took)
	}
	if n := h.ModelTurns()["c1"]; n != 1 {
		t.Fatalf("c1 reached the model %d times, want 1", n)
	}
	if strings.Contains(h.DriverLog(), "Enter retry") {
		t.Fatalf("an Enter retry was needed:\n%s", h.DriverLog())
	}
}

// TestEnterInsideThePasteWindowIsRetried: a paste that commits only after
// paste_settle (the bound) gets its Enter inside the paste window, where it
// is a newline; no evidence comes, the Enter retry submits the box, and the
// message reaches the model once.
func TestEnterInsideThePasteWindowIsRetried(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "window", seattest.Env(map[string]string{"PANTTY_SIM_COMMIT": "600ms"}),
		seattest.TOML(`paste_settle = "100ms"`, `submit_timeout = "1500ms"`))
	h.Start()
	h.Send("w1", "entered inside the paste window")
	h.WaitFinal(20*time.Second, "w1")
	st := h.Status("w1")
	if st.State != inbox.StateProcessed || st.Attempts != 1 {
		t.Fatalf("w1 is %s after %d paste(s), want processed after 1", st.State, st.Attempts)
	}
	if n := h.ModelTurns()["w1"]; n != 1 {
		t.Fatalf("w1 reached the model %d times, want 1", n)
	}
	if !strings.Contains(h.DriverLog(), "Enter retry 1 of") {
		t.Fatalf("no Enter retry logged:\n%s", h.DriverLog())
	}
}
