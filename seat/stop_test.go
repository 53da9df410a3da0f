package seat_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

func TestStopThenStartKeepsIdentityAndLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cycle")
	s := h.Seat()
	h.Start()
	if in, err := s.IntentFile().Read(); err != nil || in.Want != state.IntentRunning {
		t.Fatalf("intent after start: %+v %v", in, err)
	}
	h.Send("m1", "one")
	h.Send("m2", "two")
	h.WaitFinal(wait, "m1", "m2")
	// The status is written before the cursor moves: wait for the cursor too.
	h.WaitFor("the cursor to pass m2", wait, func() bool {
		c, err := s.CursorFile().Read()
		return err == nil && c.Closed == 2
	})
	sess := h.Session()
	owner := h.Owner()
	cursor := h.Cursor()
	inbox := h.InboxFiles()

	if r := h.Run("seat", "stop", "cycle"); r.Code != 0 {
		t.Fatalf("stop: %s", r)
	}
	waitGone(h, "the driver", owner.PID)
	waitGone(h, "the harness", sess.PanePID)
	h.WaitFor("the harness's process group to be gone", wait, func() bool { return len(groupMembers(sess.PanePID)) == 0 })
	h.WaitFor("every process of the seat to be gone", wait, func() bool { return len(procsMentioning(h.Home, h.Socket)) == 0 })
	if in, err := s.IntentFile().Read(); err != nil || in.Want != state.IntentStopped {
		t.Fatalf("intent after stop: %+v %v", in, err)
	}
	for _, p := range []string{s.ConfigPath(), s.SessionPath(), s.CursorPath(), s.OwnerPath(), s.HeartbeatPath()} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("stop removed state: %v", err)
		}
	}
	if got := h.Session(); got != sess {
		t.Errorf("stop changed session.toml: %+v -> %+v", sess, got)
	}
	seattest.CheckPrivate(t, s.Dir)

	h.Start()
	if in, err := s.IntentFile().Read(); err != nil || in.Want != state.IntentRunning {
		t.Fatalf("intent after the second start: %+v %v", in, err)
	}
	again := h.Session()
	if again.ID != sess.ID || again.Generation != sess.Generation || !again.Resumed || again.TmuxName != "cycle" {
		t.Fatalf("restart must resume the same session: before %+v, after %+v", sess, again)
	}
	lastLaunchResumed(t, s, sess.ID)
	if c := h.Cursor(); c.ID != cursor.ID || c.Closed != cursor.Closed || c.Seq != cursor.Seq {
		t.Fatalf("cursor changed across stop/start: %+v -> %+v", cursor, c)
	}
	if got := h.InboxFiles(); fmt.Sprint(got) != fmt.Sprint(inbox) {
		t.Fatalf("inbox changed across stop/start:\nbefore %v\nafter  %v", inbox, got)
	}
	h.Send("m3", "three")
	h.WaitFinal(wait, "m3")
	turns := h.ModelTurns()
	if turns["m1"] != 1 || turns["m2"] != 1 || turns["m3"] != 1 {
		t.Fatalf("each message must reach the model once: %v", turns)
	}
	for _, rq := range h.Requests() {
		if rq.MsgID() == "m3" && (rq.SessionID != sess.ID || rq.HistoryTurns < 2) {
			t.Fatalf("m3 ran in session %s after %d turns; want %s after the 2 earlier ones", rq.SessionID, rq.HistoryTurns, sess.ID)
		}
	}
	h.WaitFor("the cursor to pass m3", wait, func() bool {
		c, err := s.CursorFile().Read()
		return err == nil && c.ID == "m3" && c.Closed == 3
	})
}

// A seat whose driver died still stops cleanly: stop takes the free lock and
// ends the orphaned harness and its tmux session itself.
func TestStopWithoutDriverEndsTheHarness(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "orphan")
	h.Start()
	o := h.Owner()
	sess := h.Session()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(h, "the killed driver", o.PID)
	if r := h.Run("seat", "stop", "orphan"); r.Code != 0 {
		t.Fatalf("stop without a driver: %s", r)
	}
	waitGone(h, "the orphaned harness", sess.PanePID)
	h.WaitFor("every process of the seat to be gone", wait, func() bool { return len(procsMentioning(h.Home, h.Socket)) == 0 })
	if in, _ := h.Seat().IntentFile().Read(); in.Want != state.IntentStopped {
		t.Fatalf("intent after stop: %q", in.Want)
	}
	if got := h.Session(); got.ID != sess.ID {
		t.Fatalf("stop changed the session: %+v -> %+v", sess, got)
	}
}

// TestADriverStartedBeforeAStopLeavesTheSeatStopped: recover spawns a
// driver (`__drive`, no progress pipe) and a person's `seat stop` runs
// before that driver holds owner.lock, so the stop finds no driver to stop
// and returns 0. The driver, once it holds the lock, reads the stop and
// leaves: exit 0, no harness, no tmux session, the intent still stopped
// (a soak's stop-start racing a revival, 2026-12-06: the seat ran on).
func TestADriverStartedBeforeAStopLeavesTheSeatStopped(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "raced")
	if err := h.Seat().Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := h.Seat().SetIntent(state.IntentStopped, "seat stop"); err != nil {
		t.Fatal(err)
	}
	r := h.Run("__drive", "raced")
	if r.Code != 0 {
		t.Fatalf("a driver on a stopped seat: %s", r)
	}
	// Its log is its stderr (driver.log when recover or start spawns it).
	if !strings.Contains(r.Stderr+r.Stdout, `the seat's intent is "stopped" (recorded by 'seat stop'`) {
		t.Fatalf("the driver's log does not say why it left: %s", r)
	}
	if _, err := h.Seat().SessionFile().Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("session.toml after the driver left: %v (want none: nothing launched)", err)
	}
	if procs := procsMentioning(h.Home, h.Socket); len(procs) != 0 {
		t.Fatalf("processes of the seat after the driver left: %v", procs)
	}
	if in, _ := h.Seat().IntentFile().Read(); in.Want != state.IntentStopped {
		t.Fatalf("intent after the driver left: %q", in.Want)
	}
}
