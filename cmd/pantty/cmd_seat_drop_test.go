package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// TestSeatDropWithdrawsQueuedMessagesOnly drops queued messages with no driver
// (under the lock) and with a live one (through it, while a message is in
// flight): each dropped one is failed with reason dropped, the one in flight is
// left and named, and none of the dropped ever reaches the model — counted
// from the simulator's request log, after a later message went through.
func TestSeatDropWithdrawsQueuedMessagesOnly(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "drop", seattest.TOML(`turn_ceiling = "5m"`))
	h.Send("f1", "a slow one [sim:hang]")
	for _, id := range []string{"q1", "q2", "q3", "q4"} {
		h.Send(id, "queued "+id)
	}
	dropped := func(id string) {
		t.Helper()
		if st := h.Status(id); st.State != inbox.StateFailed || st.Reason != inbox.ReasonDropped || !strings.Contains(st.Detail, "pantty seat retry drop "+id) {
			t.Fatalf("%s after the drop: want failed, reason dropped, a retry hint naming the seat; got %+v", id, st)
		}
	}

	// No driver: dropped under the lock.
	if r := h.Run("seat", "drop", h.Name, "q1"); r.Code != exitOK || !strings.Contains(r.Stdout, "dropped 1 queued message(s): q1") {
		t.Fatalf("seat drop of a queued message with no driver: %s", r)
	}
	dropped("q1")
	if r := h.Run("seat", "drop", h.Name, "q1"); r.Code != exitFailed || !strings.Contains(r.Stderr, "not dropped: q1 (failed)") {
		t.Fatalf("dropping a dropped message again: want exit 1 naming it; got %s", r)
	}
	if r := h.Run("seat", "drop", h.Name, "nosuch"); r.Code != exitNotFound {
		t.Fatalf("seat drop of an unknown id: want exit %d, got %s", exitNotFound, r)
	}
	for _, args := range [][]string{{"seat", "drop", h.Name}, {"seat", "drop", h.Name, "q2", "--queued"}} {
		if r := h.Run(args...); r.Code != exitBadInput || !strings.Contains(r.Stderr, "usage: pantty seat drop") {
			t.Fatalf("pantty %s: want a usage line; got %s", strings.Join(args, " "), r)
		}
	}

	// A live driver with f1 in its turn: the driver drops, f1 stays.
	h.Start()
	s := h.Seat()
	h.WaitFor("f1 in its turn", time.Minute, func() bool {
		st, err := s.ReadStatus("f1")
		return err == nil && st.State == inbox.StateSubmitted
	})
	if r := h.Run("seat", "drop", h.Name, "f1"); r.Code != exitFailed || !strings.Contains(r.Stderr, "f1 (submitted)") {
		t.Fatalf("dropping the message in flight: want exit 1 naming it; got %s", r)
	}
	if st := h.Status("f1"); st.State != inbox.StateSubmitted {
		t.Fatalf("the message in flight was touched: %+v", st)
	}
	if r := h.Run("seat", "drop", h.Name, "q2"); r.Code != exitOK {
		t.Fatalf("seat drop through the driver: %s", r)
	}
	dropped("q2")
	if r := h.Run("seat", "drop", h.Name, "--queued"); r.Code != exitOK || !strings.Contains(r.Stdout, "dropped 2 queued message(s): q3 q4") {
		t.Fatalf("seat drop --queued: %s", r)
	}
	dropped("q3")
	dropped("q4")
	r := h.Run("seat", "inbox", h.Name)
	if r.Code != 0 || strings.Count(r.Stdout, "dropped") != 4 {
		t.Fatalf("seat inbox does not show the four dropped messages: %s", r)
	}

	// The queue goes on: f1 is cancelled, a later message is processed, and
	// none of the dropped ones reached the model before it (or after).
	if r := h.Run("seat", "cancel", h.Name); r.Code != exitOK {
		t.Fatalf("seat cancel: %s", r)
	}
	// seat show's last step says what ended each, where no turn end did.
	for id, want := range map[string]string{
		"f1": `(?m)^  \S+  failed +cancelled by pantty seat cancel: the turn was interrupted, no turn end$`,
		"q2": `(?m)^  \S+  failed +withdrawn by pantty seat drop before delivery$`,
	} {
		if r := h.Run("seat", "show", h.Name, id); r.Code != exitOK || !regexp.MustCompile(want).MatchString(r.Stdout) || strings.Contains(r.Stdout, "turn end -") {
			t.Errorf("seat show %s: want its last step to match %s; got %s", id, want, r)
		}
	}
	h.Send("z1", "after the drop")
	h.WaitFinal(time.Minute, "z1")
	turns := h.ModelTurns()
	for _, id := range []string{"q1", "q2", "q3", "q4"} {
		if turns[id] != 0 {
			t.Fatalf("dropped message %s reached the model %d time(s): %v", id, turns[id], turns)
		}
	}
	if turns["z1"] != 1 || h.Status("z1").State != inbox.StateProcessed {
		t.Fatalf("the message after the drop: turns %v, status %+v", turns, h.Status("z1"))
	}
	// A dropped message is retried like any failed one.
	if r := h.Run("seat", "retry", h.Name, "q3"); r.Code != exitOK {
		t.Fatalf("seat retry of a dropped message: %s", r)
	}
	h.WaitFinal(time.Minute, "q3")
	if st := h.Status("q3"); st.State != inbox.StateProcessed {
		t.Fatalf("the retried dropped message: %+v", st)
	}
}

// TestSeatRmRefusesALiveSeatAndRemovesAStoppedOne: exit 3 naming the holder
// while a driver runs; once stopped the seat's directory is gone, its workdir
// stays, and the name is unknown (exit 5).
func TestSeatRmRefusesALiveSeatAndRemovesAStoppedOne(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "rmme")
	h.Start()
	o := h.Owner()
	if r := h.Run("seat", "rm", h.Name); r.Code != exitRefused || !strings.Contains(r.Stderr, o.Holder) || !strings.Contains(r.Stderr, "pantty seat stop rmme") {
		t.Fatalf("seat rm of a running seat: want exit 3 naming %s and the stop; got %s", o.Holder, r)
	}
	if _, err := os.Stat(h.Seat().Dir); err != nil {
		t.Fatalf("a refused rm touched the seat: %v", err)
	}
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	r := h.Run("seat", "rm", h.Name)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "removed") {
		t.Fatalf("seat rm of a stopped seat: %s", r)
	}
	if _, err := os.Stat(h.Seat().Dir); !os.IsNotExist(err) {
		t.Fatalf("the seat directory is still there: %v", err)
	}
	if _, err := os.Stat(h.Work); err != nil {
		t.Fatalf("the workdir went with the seat: %v", err)
	}
	if r := h.Run("status", h.Name); r.Code != exitNotFound {
		t.Fatalf("status of the removed seat: want exit %d, got %s", exitNotFound, r)
	}
	if r := h.Run("seat", "list"); r.Code != 0 || strings.Contains(r.Stdout, "rmme") {
		t.Fatalf("seat list after rm: %s", r)
	}
}
