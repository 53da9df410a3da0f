package tmux_test

import (
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// closesWithin fails unless w.Done() is closed within d.
func closesWithin(t *testing.T, w *tmux.Watch, d time.Duration, what string) {
	t.Helper()
	select {
	case <-w.Done():
		t.Logf("%s: watch ended (%s)", what, w.Reason())
	case <-time.After(d):
		w.Stop()
		t.Fatalf("%s: watch channel not closed within %v", what, d)
	}
}

// stillOpen fails if w.Done() is already closed.
func stillOpen(t *testing.T, w *tmux.Watch, what string) {
	t.Helper()
	select {
	case <-w.Done():
		t.Fatalf("%s: watch ended early (%s)", what, w.Reason())
	default:
	}
}

func TestWatchSession(t *testing.T) {
	t.Parallel()
	const prompt = 2 * time.Second
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	newSession(t, c, tmux.NewSessionOpts{Name: "w1", Argv: []string{"sleep", "60"}})
	newSession(t, c, tmux.NewSessionOpts{Name: "w11", Argv: []string{"sleep", "60"}})
	newSession(t, c, tmux.NewSessionOpts{Name: "w2", Argv: []string{"sleep", "60"}})

	w1, err := c.WatchSession(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := c.WatchSession(ctx, "w2")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()

	// The watchers are visible as read-only control clients and count as
	// attached.
	cls, err := c.Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]tmux.ClientInfo{}
	for _, ci := range cls {
		seen[ci.PID] = ci
	}
	for _, w := range []*tmux.Watch{w1, w2} {
		ci, ok := seen[w.PID()]
		if !ok || !ci.ControlMode || !ci.ReadOnly || ci.TTY != "" {
			t.Errorf("watcher pid %d in Clients = %+v (found %v)", w.PID(), ci, ok)
		}
	}
	if p, _ := c.ListPanes(ctx); len(p) == 3 {
		for _, pane := range p {
			if want := map[string]int{"w1": 1, "w11": 0, "w2": 1}[pane.Session]; pane.SessionAttached != want {
				t.Errorf("session %s attached = %d, want %d", pane.Session, pane.SessionAttached, want)
			}
		}
	}

	// Killing a session with a similar name does not end the watch.
	if err := c.KillSession(ctx, "w11"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // give a wrong notification time to arrive
	stillOpen(t, w1, "after killing w11")

	// Killing the watched session closes its channel, not the other one's.
	if err := c.KillSession(ctx, "w1"); err != nil {
		t.Fatal(err)
	}
	closesWithin(t, w1, prompt, "kill-session w1")
	stillOpen(t, w2, "w2 after killing w1")

	// Killing the server closes the rest.
	if err := c.KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	closesWithin(t, w2, prompt, "kill-server")
}

func TestWatchStopAndErrors(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	_, err := c.WatchSession(ctx, "nope")
	mustKind(t, err, tmux.ErrNoServer, "WatchSession without server")

	newSession(t, c, tmux.NewSessionOpts{Name: "s", Argv: []string{"sleep", "60"}})
	_, err = c.WatchSession(ctx, "nope")
	mustKind(t, err, tmux.ErrNoTarget, "WatchSession on missing session")

	w, err := c.WatchSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	pid := w.PID()
	w.Stop()
	closesWithin(t, w, time.Second, "Stop")
	if w.Reason() != "stopped" {
		t.Errorf("Reason after Stop = %q", w.Reason())
	}
	waitFor(t, 2*time.Second, "control client to leave", func() (bool, error) {
		cls, err := c.Clients(ctx)
		return len(cls) == 0 && !alive(pid), err
	})
	w.Stop() // idempotent
	if ok, _ := c.HasSession(ctx, "s"); !ok {
		t.Error("stopping the watch affected the session")
	}
}

// TestWatchDetachOnDestroyOff covers a server where tmux moves a client to
// another session instead of ending it when its session is destroyed.
func TestWatchDetachOnDestroyOff(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	newSession(t, c, tmux.NewSessionOpts{Name: "a", Argv: []string{"sleep", "60"}})
	newSession(t, c, tmux.NewSessionOpts{Name: "b", Argv: []string{"sleep", "60"}})
	if err := c.SetOption(ctx, "", "detach-on-destroy", "off"); err != nil {
		t.Fatal(err)
	}
	w, err := c.WatchSession(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := c.KillSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	closesWithin(t, w, 2*time.Second, "kill-session with detach-on-destroy off")
}

// Notify turns the pane's output into wake-ups on Changed: nothing while it
// is off (the default), one per change while it is on.
func TestWatchNotifiesPaneOutput(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "out", Argv: []string{"cat"}})
	w, err := c.WatchSession(ctx, "out")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	quiet := func(what string) {
		t.Helper()
		select {
		case <-w.Changed():
			t.Fatalf("%s: a wake-up", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
	woken := func(what string) {
		t.Helper()
		select {
		case <-w.Changed():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no wake-up within 5s", what)
		}
	}
	if err := c.SendLiteral(ctx, p.ID, "before"); err != nil {
		t.Fatal(err)
	}
	quiet("output while notifications are off")
	if err := w.Notify(true); err != nil {
		t.Fatal(err)
	}
	if err := c.SendLiteral(ctx, p.ID, "typed"); err != nil {
		t.Fatal(err)
	}
	woken("output while notifications are on")
	if err := w.Notify(false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // tmux takes the flag in order; drain what came before it
	select {
	case <-w.Changed():
	default:
	}
	if err := c.SendLiteral(ctx, p.ID, "after"); err != nil {
		t.Fatal(err)
	}
	quiet("output after notifications were turned off")
}
