package gemini_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAPersonsClearRestoresTheSeatsSession is the unasked /clear on the
// real Gemini CLI (the simulator's TestUnaskedClearRestoresTheSeatsSession):
// "/clear" typed into the pane as a person (or a completion list's first
// entry) would starts a new session; the driver ends the harness and
// relaunches it resuming the recorded session, and the next board message
// is processed once, in that session.
func TestAPersonsClearRestoresTheSeatsSession(t *testing.T) {
	t.Parallel()
	r := newRig(t, "gm-clear", `ready_timeout = "90s"`)
	r.Start()
	r.Send("before-clear", "a message before the clear")
	r.Processed("before-clear")
	before := r.Session()
	// Typed as a person types it, then Enter once the box shows it and the
	// CLI's key handler caught up with its drawing (a pasted "/clear" and an
	// Enter at once left the text in the box: the Enter fell in the paste
	// window).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pane := before.PaneID
	if err := r.Tmux().SendLiteral(ctx, pane, "/clear"); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("/clear in the box", 10*time.Second, func() bool { return strings.Contains(r.Screen(), "> /clear") })
	time.Sleep(time.Second) // the key handler lags the render (docs/gemini.md, "The command list after a paste")
	cleared := time.Now()
	if err := r.Tmux().SendKeys(ctx, pane, "Enter"); err != nil {
		t.Fatal(err)
	}
	r.WaitFor("the driver to restore the seat's session", 60*time.Second, func() bool {
		return strings.Contains(r.DriverLog(), "restoring the seat's session "+before.ID)
	})
	r.WaitFor("the harness relaunched", 90*time.Second, func() bool {
		s := r.Session()
		return s.PanePID != 0 && s.PanePID != before.PanePID && syscall.Kill(s.PanePID, 0) == nil
	})
	restored := time.Since(cleared)
	r.Send("after-clear", "a message sent after the clear")
	r.Processed("after-clear")
	if n := r.Turns()["after-clear"]; n != 1 {
		t.Fatalf("the message after the clear reached the model %d times, want once", n)
	}
	if got := r.Session().ID; got != before.ID {
		t.Fatalf("session.toml names %s after the restore, want the seat's %s", got, before.ID)
	}
	t.Logf("/clear → the recorded session relaunched: %s; the next message processed once in %s", restored.Round(time.Millisecond), before.ID)
}
