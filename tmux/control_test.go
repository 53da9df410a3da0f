package tmux_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// catPane starts a session whose pane writes what it is typed into a file
// (the tty's echo off, so the screen stays empty), and returns the pane,
// the file and a Conn on it.
func catPane(t *testing.T, name string) (*tmux.Client, tmux.Pane, string, *tmux.Conn) {
	t.Helper()
	c := tmuxtest.Server(t)
	out := filepath.Join(tmuxtest.Dir(t), name+".out")
	p := newSession(t, c, tmux.NewSessionOpts{Name: name, Argv: []string{"sh", "-c", "stty -echo; exec cat > " + out}})
	n := tmux.NewConn(c, name, t.Logf)
	t.Cleanup(n.Close)
	return c, p, out, n
}

// TestConnCommandsAsThePlainClient: capture, keys and a bracketed paste
// through the control client do what the plain client does, text with
// quotes, '$', '#{…}', ';', newlines, control characters and non-ASCII
// arriving byte for byte; and %output wakes Follow's channel.
func TestConnCommandsAsThePlainClient(t *testing.T) {
	t.Parallel()
	c, p, out, n := catPane(t, "ctl1")
	ctx := ctxFor(t)
	changed, release, ok := n.Follow(ctx)
	if !ok || n.Control() == nil {
		t.Fatal("no control client")
	}
	defer release()
	// A second follower at the same time (a paste's commit wait beside a
	// cancel's look) hears the same change: each has its own channel.
	changed2, release2, ok := n.Follow(ctx)
	if !ok {
		t.Fatal("no second follower")
	}
	defer release2()
	text := "it's $HOME #{pane_id} ~ a;\tb \"q\" é\\ end;"
	if err := n.Paste(ctx, p.ID, []byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := n.SendKeys(ctx, p.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the paste in the file", func() (bool, error) {
		b, err := os.ReadFile(out)
		return string(b) == text+"\n", err
	})
	// the pane printed nothing (echo off); print something now
	_ = rawTmux(t, c, "send-keys", "-t", p.ID, "-l", "x")
	_, _ = n.Capture(ctx, p.ID)
	rawTmux(t, c, "respawn-pane", "-k", "-t", p.ID, "printf 'hello\\nworld\\n'; exec sleep 60")
	for i, ch := range []<-chan struct{}{changed, changed2} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("follower %d: no change event after the pane printed", i+1)
		}
	}
	waitFor(t, 5*time.Second, "the capture", func() (bool, error) {
		got, err := n.Capture(ctx, p.ID)
		want, _ := c.Capture(ctx, p.ID)
		return err == nil && got == want && strings.Contains(got, "hello\nworld\n"), err
	})
	if err := n.SendKeys(ctx, "%999", "Enter"); err == nil {
		t.Fatal("keys to a pane that does not exist: no error")
	}
	if got := rawTmux(t, c, "list-buffers", "-F", "#{buffer_name}"); strings.Contains(got, "pantty-") && !strings.Contains(got, "pantty-ack-") {
		t.Fatalf("a paste buffer was left behind: %q", got)
	}
}

// TestConnKilledMidRunLosesAndDoublesNothing: pastes, each followed by
// Enter, at least 300 and on until the control client has been killed twice
// (the one reconnect, then the fall-back to plain clients): every line
// arrives exactly once, in order.
func TestConnKilledMidRunLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	_, p, out, n := catPane(t, "ctl2")
	const least = 300
	killed := make(chan struct{})
	type result struct {
		sent int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// Each line has its own bound: after the fall-back every call is a
		// tmux process, and 600 of them on a loaded machine outlast one
		// test-wide deadline (measured: the load average was 35 once).
		// One line more once both kills are over, so the Conn meets the
		// second death (it notices a dead client at its next call).
		last := false
		for i := 0; ; i++ {
			if i >= least {
				select {
				case <-killed:
					if last {
						done <- result{sent: i}
						return
					}
					last = true
				default:
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			err := n.Paste(ctx, p.ID, []byte(fmt.Sprintf("line-%04d", i)))
			if err == nil {
				err = n.SendKeys(ctx, p.ID, "Enter")
			}
			cancel()
			if err != nil {
				done <- result{sent: i, err: err}
				return
			}
		}
	}()
	for kills := 0; kills < 2; {
		time.Sleep(30 * time.Millisecond) // let sends run on this client first
		k := n.Control()
		if k == nil {
			continue
		}
		select {
		case <-k.Done():
			// The client killed last time: Conn replaces a dead client at
			// its next call, so it can still be the one it holds (a loaded
			// full run, 2026-12-06, killed the same one twice).
			continue
		default:
		}
		_ = syscall.Kill(k.PID(), syscall.SIGKILL)
		<-k.Done()
		kills++
	}
	close(killed)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	var want strings.Builder
	for i := 0; i < r.sent; i++ {
		fmt.Fprintf(&want, "line-%04d\n", i)
	}
	waitFor(t, 30*time.Second, "every line once", func() (bool, error) {
		b, err := os.ReadFile(out)
		return string(b) == want.String(), err
	})
	if n.Control() != nil || n.Reconnects != 2 {
		t.Fatalf("after two deaths: control %v, %d reconnects (want the plain client, 2)", n.Control(), n.Reconnects)
	}
}

// BenchmarkPaneCommand: one capture-pane through the control client and
// through a plain tmux process.
func BenchmarkPaneCommand(b *testing.B) {
	c := tmuxtest.Server(b)
	p, err := c.NewSession(context.Background(), tmux.NewSessionOpts{Name: "bench", Argv: []string{"sleep", "600"}})
	if err != nil {
		b.Fatal(err)
	}
	n := tmux.NewConn(c, "bench", nil)
	defer n.Close()
	ctx := context.Background()
	b.Run("control", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := n.Capture(ctx, p.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("control-keys", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := n.SendKeys(ctx, p.ID, "C-u"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("process", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := c.Capture(ctx, p.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
