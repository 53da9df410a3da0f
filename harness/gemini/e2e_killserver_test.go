package gemini_test

import (
	"context"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/proc"
)

// TestTmuxServerDeathLeavesOneGemini: the real Gemini CLI runs as two node
// processes under the pane process, and its outer node ignores SIGHUP and
// SIGTERM (measured on 0.61.0: after a tmux kill-server the first launch ran
// on beside the relaunch on the same session, and seat stop left it). Now
// every process of the first launch is gone by the time the driver has
// relaunched on the same session, the seat answers, and nothing of it is left
// after seat stop.
func TestTmuxServerDeathLeavesOneGemini(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-killsrv", `ready_timeout = "90s"`)
	r.Start()
	// A turn first: Gemini CLI 0.61.0 does not resume a session with no
	// message in it ("No previous sessions found for this project").
	r.Send("before", "a first task")
	r.Processed("before")
	first := r.Session()
	before := proc.LaunchProcs(r.Seat())
	t.Logf("first launch: %v", before)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := r.Tmux().KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	killed := time.Now()
	r.WaitFor("the relaunch on the same session", 2*time.Minute, func() bool {
		sess := r.Session()
		return sess.Launches > first.Launches && sess.PanePID != first.PanePID
	})
	t.Logf("kill-server → relaunched in %s", time.Since(killed).Round(time.Millisecond))
	if sess := r.Session(); sess.ID != first.ID {
		t.Fatalf("relaunched on session %s, want %s", sess.ID, first.ID)
	}
	var alive []proc.LaunchProc
	for _, p := range before {
		if _, err := procid.Start(p.PID); err == nil {
			alive = append(alive, p)
		}
	}
	if len(alive) > 0 {
		t.Fatalf("the first launch still runs beside the relaunch: %v\ndriver.log:\n%s", alive, r.DriverLog())
	}
	r.Send("after", "are you there after the server died?")
	r.Processed("after")
	if turns := r.Turns(); turns["before"] != 1 || turns["after"] != 1 {
		t.Fatalf("model turns per message: %v, want before=1 after=1", turns)
	}
	now := proc.LaunchProcs(r.Seat())
	if res := r.Run("seat", "stop", r.Name); res.Code != 0 {
		t.Fatalf("seat stop: %s", res)
	}
	if left := proc.LaunchProcs(r.Seat()); len(left) > 0 {
		t.Fatalf("after seat stop (the launch was %v): still running %v", now, left)
	}
}
