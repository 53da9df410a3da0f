package tmux_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestNoServer(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t) // nothing started on this socket
	ctx := ctxFor(t)
	_, err := c.ListPanes(ctx)
	mustKind(t, err, tmux.ErrNoServer, "ListPanes")
	var te *tmux.Error
	if !errors.As(err, &te) || te.Stderr == "" || !strings.Contains(err.Error(), "list-panes") {
		t.Errorf("error %q should carry argv summary and stderr", err)
	}
	ok, err := c.HasSession(ctx, "x")
	if ok {
		t.Error("HasSession true without a server")
	}
	mustKind(t, err, tmux.ErrNoServer, "HasSession")
	mustKind(t, c.KillServer(ctx), tmux.ErrNoServer, "KillServer")
	mustKind(t, c.KillSession(ctx, "x"), tmux.ErrNoServer, "KillSession")
	_, err = c.Clients(ctx)
	mustKind(t, err, tmux.ErrNoServer, "Clients")

	// A stale socket file (server gone, file left) is also "no server".
	stale := filepath.Join(tmuxtest.Dir(t), "S")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = tmux.New(stale).ListPanes(ctx)
	mustKind(t, err, tmux.ErrNoServer, "ListPanes on stale socket")
}

func TestNoTarget(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	newSession(t, c, tmux.NewSessionOpts{Name: "present", Argv: []string{"sleep", "60"}})
	mustKind(t, c.KillSession(ctx, "missing"), tmux.ErrNoTarget, "KillSession(missing)")
	_, err := c.Capture(ctx, "%999")
	mustKind(t, err, tmux.ErrNoTarget, "Capture(%999)")
	mustKind(t, c.SendKeys(ctx, "%999", "Enter"), tmux.ErrNoTarget, "SendKeys(%999)")
	_, err = c.RespawnPane(ctx, "%999", []string{"true"}, "")
	mustKind(t, err, tmux.ErrNoTarget, "RespawnPane(%999)")
	if errors.Is(err, tmux.ErrNoServer) || errors.Is(err, tmux.ErrTimeout) {
		t.Errorf("ErrNoTarget error also matches another class: %v", err)
	}
	_, err = c.NewSession(ctx, tmux.NewSessionOpts{Name: "present", Argv: []string{"true"}})
	if err == nil || errors.Is(err, tmux.ErrNoTarget) || errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("duplicate NewSession: got %v, want an unclassified error", err)
	}
}

// TestInvalidRefusedBeforeTmux points Binary at a script that records any
// invocation, then checks malformed targets never reach it.
func TestInvalidRefusedBeforeTmux(t *testing.T) {
	t.Parallel()
	dir := tmuxtest.Dir(t)
	called := filepath.Join(dir, "called")
	c := &tmux.Client{Socket: filepath.Join(dir, "S"), Binary: writeScript(t, dir, "fake-tmux", "touch "+tmux.ShellQuote(called)+"\n")}
	ctx := ctxFor(t)
	var errs []error
	for _, id := range []string{"", "3", "%", "%3a", "%-1", "=x", "x:0.1", "%3 ", "@1"} {
		errs = append(errs,
			c.Paste(ctx, id, []byte("x")),
			c.PasteRaw(ctx, id, []byte("x")),
			c.SendKeys(ctx, id, "Enter"),
			c.SendLiteral(ctx, id, "x"),
		)
		_, err := c.Capture(ctx, id)
		errs = append(errs, err)
		_, err = c.RespawnPane(ctx, id, nil, "")
		errs = append(errs, err)
	}
	for _, name := range []string{"", "a.b", "a:b", "a b", "=a", "a\n", "é"} {
		_, err := c.NewSession(ctx, tmux.NewSessionOpts{Name: name})
		errs = append(errs, err, c.KillSession(ctx, name), c.SetHook(ctx, name, "pane-died", "x"))
		_, err = c.HasSession(ctx, name)
		errs = append(errs, err)
		_, err = c.WatchSession(ctx, name)
		errs = append(errs, err)
	}
	for _, target := range []string{"a", "=a.b", "%x", "-g", "=a:0"} {
		errs = append(errs, c.SetOption(ctx, target, "remain-on-exit", "on"))
	}
	_, err := c.NewSession(ctx, tmux.NewSessionOpts{Name: "ok", Argv: []string{"-x"}})
	errs = append(errs, err, c.SendKeys(ctx, "%1"), c.SetHook(ctx, "ok", "pane died", "x"))
	_, err = c.NewSession(ctx, tmux.NewSessionOpts{Name: "ok", Env: []string{"NOEQUALS"}})
	errs = append(errs, err)
	_, err = c.NewSession(ctx, tmux.NewSessionOpts{Name: "ok", Dir: filepath.Join(dir, "missing")})
	errs = append(errs, err)
	_, err = c.RespawnPane(ctx, "%1", nil, called) // a file, not a directory
	errs = append(errs, err)
	for i, err := range errs {
		if !errors.Is(err, tmux.ErrInvalid) {
			t.Errorf("call %d: got %v, want ErrInvalid", i, err)
		}
	}
	if _, err := os.Stat(called); err == nil {
		t.Fatal("tmux was invoked for an invalid argument")
	}
	// Control: a valid call does reach the binary.
	if err := c.SendKeys(ctx, "%1", "Enter"); err != nil {
		t.Fatalf("valid call through fake tmux: %v", err)
	}
	if _, err := os.Stat(called); err != nil {
		t.Fatal("control failed: valid call did not invoke the binary")
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	dir := tmuxtest.Dir(t)
	slow := writeScript(t, dir, "slow-tmux", "sleep 30\n")
	c := &tmux.Client{Socket: filepath.Join(dir, "S"), Binary: slow, Timeout: 200 * time.Millisecond}

	start := time.Now()
	_, err := c.ListPanes(context.Background())
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timed-out call took %v", d)
	}
	mustKind(t, err, tmux.ErrTimeout, "ListPanes via sleeping binary")
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, tmux.ErrNoServer) {
		t.Errorf("timeout error %v: want DeadlineExceeded and not ErrNoServer", err)
	}

	// The caller's own deadline is a timeout too.
	c.Timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	mustKind(t, c.KillServer(ctx), tmux.ErrTimeout, "KillServer with caller deadline")

	// Cancellation is not a timeout: it is reported as context.Canceled.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err = c.KillServer(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, tmux.ErrTimeout) {
		t.Errorf("cancelled call: got %v, want context.Canceled only", err)
	}

	// WatchSession start-up is bounded the same way (it checks for the
	// socket file first, so make one).
	if err := os.WriteFile(c.Socket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Timeout = 200 * time.Millisecond
	_, err = c.WatchSession(context.Background(), "x")
	mustKind(t, err, tmux.ErrTimeout, "WatchSession via sleeping binary")
}
