package tmux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// errDied is a command whose control client ended before it answered: the
// command may or may not have run (Conn resolves which through its ack).
var errDied = errors.New("tmux: control client ended")

// Control is one tmux control-mode client (tmux -C) attached to a session:
// pane commands are lines on its stdin and their answers %begin/%end
// blocks on its stdout, so a command costs no process start (a plain
// Client starts one tmux process per call). Commands run one at a time.
// While changes are followed (Follow), every %output line tmux sends is a
// change event for the followers: the pane's changes, without polling the
// screen.
type Control struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}

	mu      sync.Mutex // one command at a time
	answers chan answer
	changed func() // hears every %output line (the caller coalesces)
}

// answer is one command block: its output lines, or the error tmux gave.
type answer struct {
	out []string
	err error
}

// Control starts a control-mode client attached to session name (tmux -C
// attach-session -f ignore-size,no-output: it never resizes the session's
// windows and hears no pane output until Follow asks). changed is called,
// on the client's reader, for every change (it must not block; the caller
// owns what it wakes, so that outlives one client).
func (c *Client) Control(ctx context.Context, name string, changed func()) (*Control, error) {
	cmd, stdin, stdout, args, err := c.startControl(name, "ignore-size,no-output", nil)
	if err != nil {
		return nil, err
	}
	k := &Control{cmd: cmd, stdin: stdin, done: make(chan struct{}), answers: make(chan answer, 1), changed: changed}
	go k.read(stdout)
	// The attach's own block comes first: it says whether the session is there.
	if _, err := k.wait(ctx, c.timeout()); err != nil {
		k.Close()
		return nil, &Error{Kind: classify(err.Error()), Args: summarize(args), Err: err}
	}
	return k, nil
}

// startControl starts `tmux -C attach-session -t =name -f flags` with its
// stdin and stdout piped (stderr to the given writer, or discarded): the one
// way both control-mode users (Control, WatchSession) attach. It refuses an
// empty socket and, without starting anything, a socket file that is not
// there (attach-session would start a server only to fail with "no
// sessions"). args is the command line, for the caller's errors.
func (c *Client) startControl(name, flags string, stderr io.Writer) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, args []string, err error) {
	args = []string{"-C", "attach-session", "-t", "=" + name, "-f", flags}
	if err := checkSession(name, args); err != nil {
		return nil, nil, nil, args, err
	}
	if c.Socket == "" {
		return nil, nil, nil, args, invalid("Client.Socket is empty", args)
	}
	if _, err := os.Stat(c.Socket); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, args, &Error{Kind: ErrNoServer, Args: summarize(args), Stderr: "no socket at " + c.Socket, Err: err}
	}
	cmd = c.longCommand(args)
	if stdin, err = cmd.StdinPipe(); err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	cmd.Stderr = stderr
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return nil, nil, nil, args, &Error{Args: summarize(args), Err: err}
	}
	return cmd, stdin, stdout, args, nil
}

// PID is the control client's process id.
func (k *Control) PID() int { return k.cmd.Process.Pid }

// Done is closed when the control client has ended.
func (k *Control) Done() <-chan struct{} { return k.done }

// Close ends the client (EOF on its stdin, then a kill if it lingers).
func (k *Control) Close() {
	_ = k.stdin.Close()
	select {
	case <-k.done:
	case <-time.After(time.Second):
		_ = killGroup(k.cmd)
		<-k.done
	}
}

// read turns the client's output into answers and change wake-ups until EOF.
func (k *Control) read(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 64<<10)
	var block []string
	var end, fail string // the lines that close the open block
	in := false
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimSuffix(line, "\n")
		switch {
		case err != nil:
		case in && line == end:
			in = false
			k.answers <- answer{out: block}
		case in && line == fail:
			in = false
			k.answers <- answer{err: errors.New(strings.Join(block, "\n"))}
		case in:
			block = append(block, line)
		case strings.HasPrefix(line, "%begin "):
			rest := strings.TrimPrefix(line, "%begin ")
			in, block, end, fail = true, nil, "%end "+rest, "%error "+rest
		case strings.HasPrefix(line, "%output ") || strings.HasPrefix(line, "%extended-output "):
			k.changed()
		}
		if err != nil {
			break
		}
	}
	_ = k.cmd.Wait()
	close(k.done)
}

// wait takes the next answer, the client's end, or the bound.
func (k *Control) wait(ctx context.Context, bound time.Duration) ([]string, error) {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case a := <-k.answers:
		return a.out, a.err
	case <-k.done:
		select { // an answer read just before EOF still counts
		case a := <-k.answers:
			return a.out, a.err
		default:
		}
		return nil, errDied
	case <-ctx.Done():
		k.Close() // the answer would pair with the next command: this client is spent
		return nil, ctx.Err()
	case <-t.C:
		k.Close()
		return nil, context.DeadlineExceeded
	}
}

// run sends one command line and returns its answers: blocks answers, one
// per command of the line; a failing command ends the line (tmux runs no
// later command of it), so its error is the answer.
func (k *Control) run(ctx context.Context, bound time.Duration, line string, blocks int) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.done:
		return nil, errDied
	default:
	}
	if _, err := io.WriteString(k.stdin, line+"\n"); err != nil {
		return nil, errDied
	}
	var first []string
	for i := 0; i < blocks; i++ {
		out, err := k.wait(ctx, bound)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first = out
		}
	}
	return first, nil
}

// quote makes s one tmux command-line word that arrives exactly as s:
// single-quoted runs (nothing is special in them), a single quote and
// control characters double-quoted with tmux's escapes. tmux 3.3a has no
// octal escape; \u works for every control character. NUL cannot be
// carried (tmux words are C strings): ok is false.
func quote(s string) (string, bool) {
	var b strings.Builder
	open := false
	for _, r := range s {
		if r == 0 || r == utf8.RuneError {
			return "", false
		}
		if r < 0x20 || r == 0x7f || r == '\'' {
			if open {
				b.WriteByte('\'')
				open = false
			}
			if r == '\'' {
				b.WriteString(`"'"`)
			} else {
				fmt.Fprintf(&b, `"\u%04x"`, r)
			}
			continue
		}
		if !open {
			b.WriteByte('\'')
			open = true
		}
		b.WriteRune(r)
	}
	if open {
		b.WriteByte('\'')
	}
	if b.Len() == 0 {
		return "''", true
	}
	return b.String(), true
}

// keyLine is send-keys as one control-mode line.
func keyLine(paneID string, keys []string) (string, bool) {
	words := []string{"send-keys", "-t", paneID, "--"}
	for _, k := range keys {
		q, ok := quote(k)
		if !ok {
			return "", false
		}
		words = append(words, q)
	}
	return strings.Join(words, " "), true
}

// pasteLine is Paste as control-mode lines: the text into a named buffer,
// then paste-buffer -p -d from it (tmux's answer: two blocks).
func pasteLine(paneID, buffer string, text []byte) (string, bool) {
	q, ok := quote(string(text))
	if !ok {
		return "", false
	}
	return "set-buffer -b " + buffer + " -- " + q + " ; paste-buffer -p -d -b " + buffer + " -t " + paneID, true
}

// lineOf joins captured lines the way the plain client's stdout reads.
func lineOf(out []string) string {
	if len(out) == 0 {
		return ""
	}
	var b bytes.Buffer
	for _, l := range out {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
