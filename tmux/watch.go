package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Watch is a tmux control-mode client attached to one session whose only
// job is to notice, without polling, that the session or the whole server
// went away: tmux tells a control client "%exit" when its session is
// destroyed (or the server dies) and then the client exits. Done is closed
// when that client has ended, whatever the reason.
//
// The watcher is attached read-only, ignores its size (it never resizes the
// session's windows) and asks for no pane output until Notify turns it on:
// then every "%output" line tmux sends wakes Changed, so a caller waiting for
// the pane to change (a dialog closed, a draft cleared) hears it as an event
// instead of polling the screen. It does count as an
// attached client: session_attached includes it, and Clients reports it
// with ControlMode set, so callers deciding "is a human attached" must
// discount control-mode clients.
type Watch struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{}
	stopOnce sync.Once

	mu     sync.Mutex
	reason string

	changed chan struct{} // one pending wake-up: the pane printed something
	inMu    sync.Mutex    // one command at a time on stdin
	notify  bool          // pane output is on (Notify)
}

// Changed returns a channel that receives (coalesced: at most one pending)
// whenever a pane of the watched session printed something, while Notify is
// on. The value says nothing about what changed: the caller looks at the pane.
func (w *Watch) Changed() <-chan struct{} { return w.changed }

// Notify turns pane-output notifications on or off. tmux then sends (or stops
// sending) the session's pane output to this control client ("refresh-client
// -f !no-output" / "-f no-output", tmux 3.2 and later); off is the default,
// so a busy harness's output costs nothing while nobody waits for a change.
// It reports whether the request was written (not whether tmux took it).
func (w *Watch) Notify(on bool) error {
	w.inMu.Lock()
	defer w.inMu.Unlock()
	if w.notify == on {
		return nil
	}
	flag := "no-output"
	if on {
		flag = "!no-output"
	}
	if _, err := io.WriteString(w.stdin, "refresh-client -f "+flag+"\n"); err != nil {
		return &Error{Args: []string{"refresh-client", "-f", flag}, Err: err}
	}
	w.notify = on
	return nil
}

// Done returns a channel closed when the control client has ended: the
// session was killed, the server exited, the client was moved to another
// session, Stop was called, or the process died. It is never closed while
// the session is still being watched.
func (w *Watch) Done() <-chan struct{} { return w.done }

// Reason says, once Done is closed, why the watch ended (e.g. "%exit",
// "stopped", "session changed to x"), for logs. It is empty before then
// and is not a reliable classification: confirm with HasSession/ListPanes.
func (w *Watch) Reason() string {
	select {
	case <-w.done:
	default:
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

// PID is the control client's process id (as Clients reports it).
func (w *Watch) PID() int { return w.cmd.Process.Pid }

// setReason records the first reason given for the end of the watch.
func (w *Watch) setReason(r string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reason == "" {
		w.reason = r
	}
}

// Stop ends the watch and returns once the control client has exited. It
// closes the client's stdin (tmux exits on EOF) and kills it if it does not
// exit within a second. Calling Stop more than once is harmless.
func (w *Watch) Stop() {
	w.stopOnce.Do(func() {
		w.setReason("stopped")
		_ = w.stdin.Close()
		select {
		case <-w.done:
			return
		case <-time.After(time.Second):
		}
		_ = killGroup(w.cmd)
	})
	<-w.done
}

// WatchSession starts a control-mode client (tmux -C attach-session -t
// =name -f no-output,ignore-size,read-only, stdin kept open through a pipe)
// and returns once tmux has confirmed the attach. A missing session is
// ErrNoTarget, no server ErrNoServer, and an attach not confirmed within
// the client timeout (or before ctx ends) is ErrTimeout.
//
// ctx only bounds the start-up. The watch itself lives until the control
// client ends or Stop is called: tying it to a context would make a routine
// cancellation look exactly like "the session died".
func (c *Client) WatchSession(ctx context.Context, name string) (*Watch, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	var stderr bytes.Buffer
	cmd, stdin, stdout, args, err := c.startControl(name, "no-output,ignore-size,read-only", &stderr)
	if err != nil {
		return nil, err
	}
	w := &Watch{cmd: cmd, stdin: stdin, done: make(chan struct{}), changed: make(chan struct{}, 1)}
	ready := make(chan error, 1)
	go w.read(stdout, &stderr, name, args, ready)

	timer := time.NewTimer(c.timeout())
	defer timer.Stop()
	var cause error
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
		return w, nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-timer.C:
		cause = context.DeadlineExceeded
	}
	// Start-up failed: no graceful exit wanted, kill the client now.
	w.stopOnce.Do(func() {
		w.setReason("start-up abandoned")
		_ = killGroup(w.cmd)
	})
	<-w.done
	e := &Error{Args: summarize(args), Err: cause}
	if errors.Is(cause, context.DeadlineExceeded) {
		e.Kind = ErrTimeout
	}
	return nil, e
}

// read consumes the control client's output until EOF. The first command
// block (%begin ... %end or %error) is tmux's answer to the attach and is
// reported on ready; afterwards it watches for %exit and for the client
// being switched to another session. At EOF it reaps the process, reports
// a start-up failure if the attach never succeeded, and closes done.
func (w *Watch) read(stdout io.Reader, stderr *bytes.Buffer, name string, args []string, ready chan<- error) {
	r := bufio.NewReader(stdout)
	started := false
	inBlock := false
	var blockLines []string
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			switch {
			case !started && strings.HasPrefix(line, "%begin "):
				inBlock = true
			case !started && inBlock && strings.HasPrefix(line, "%end "):
				started = true
				ready <- nil
			case !started && inBlock && strings.HasPrefix(line, "%error "):
				inBlock = false
			case !started && inBlock:
				blockLines = append(blockLines, line)
			case started && (strings.HasPrefix(line, "%output ") || strings.HasPrefix(line, "%extended-output ")):
				select {
				case w.changed <- struct{}{}:
				default: // one wake-up pending is enough: the caller reads the pane itself
				}
			case strings.HasPrefix(line, "%exit"):
				w.setReason(line)
			case started && strings.HasPrefix(line, "%session-changed "):
				// "%session-changed $id name": with detach-on-destroy off
				// tmux moves the client to another session instead of
				// exiting; for us that means ours is gone.
				if f := strings.SplitN(line, " ", 3); len(f) == 3 && f[2] != name {
					w.setReason("session changed to " + f[2])
					_ = w.stdin.Close()
					_ = killGroup(w.cmd)
				}
			}
		}
		if err != nil {
			break
		}
	}
	_ = w.cmd.Wait()
	_ = w.stdin.Close()
	if !started {
		e := &Error{Args: summarize(args), Stderr: strings.TrimSpace(strings.Join(blockLines, "\n"))}
		if e.Stderr == "" {
			e.Stderr = strings.TrimSpace(stderr.String())
		}
		if e.Stderr == "" {
			e.Stderr = "control client exited before attaching"
		}
		e.Kind = classify(e.Stderr)
		ready <- e
	} else {
		w.setReason("control client exited")
	}
	close(w.done)
}
