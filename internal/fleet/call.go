package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Protocol is the fleet protocol this pantty speaks: what `pantty version
// --json` says as "fleet". A remote that answers a lower one (or no such
// line: a pantty from before the fleet) is too old, shown as unknown with
// that reason, never read as if it had no seats.
const Protocol = 1

// Version is `pantty version --json`'s one line.
type Version struct {
	V       int    `json:"v"`
	Version string `json:"version"`
	Fleet   int    `json:"fleet"`
}

// sshExit is the exit status ssh itself uses for its own failure (no
// connection, refused authentication, a dropped connection); the remote
// pantty never exits with it.
const sshExit = 255

// Reasons a call's answer is unknown, by class (Reply.Class).
const (
	Unreachable = "unreachable" // ssh could not connect or authenticate
	TimedOut    = "timed out"   // no answer within the bound
	Dropped     = "dropped"     // the connection ended before the remote pantty did
	TooOld      = "too old"     // the remote pantty speaks no or an older fleet protocol
	NoPantty    = "no pantty"   // the remote has no pantty where the hosts file says
)

// Call is one run of the remote `pantty ARGS`.
type Call struct {
	Args  []string
	Stdin io.Reader
	// Stdout and Stderr receive the remote pantty's output as it comes (the
	// version line excepted); nil: it is kept in Reply.
	Stdout, Stderr io.Writer
	// Bound is the most the call may take, connection included; 0: no bound
	// but ssh's own connect timeout (a follow, a send --wait).
	Bound time.Duration
	// Answered, when set, is called once the remote pantty has said its
	// version: the host is up (a follow that prints nothing is still heard).
	Answered func()
}

// Reply is what came back: the remote exit code, or why the answer is unknown.
type Reply struct {
	Host    string
	Version Version
	Code    int    // the remote pantty's exit code; meaningful when Class is ""
	Class   string // empty, or why the answer is unknown (Unreachable, TimedOut, …)
	Reason  string // the unknown answer in words, naming the host
	Stdout  []byte // when Call.Stdout is nil
	Stderr  string // when Call.Stderr is nil; else its last lines
	Took    time.Duration
}

// Unknown reports whether the host's answer could not be had.
func (r Reply) Unknown() bool { return r.Class != "" }

// connectTimeout bounds ssh's connection when the call itself has no bound.
const connectTimeout = 10 * time.Second

// script is the remote shell command: the version line, then the verb, in
// one round trip (`&&`: a pantty that cannot say its fleet protocol runs
// nothing).
func (h Host) script(args []string) string {
	bin := h.Pantty
	if bin == "" {
		bin = "pantty"
	}
	var b strings.Builder
	b.WriteString("P=" + quote(bin) + `; "$P" version --json && exec "$P"`)
	if h.Home != "" {
		b.WriteString(" --home " + quote(h.Home))
	}
	for _, a := range args {
		b.WriteString(" " + quote(a))
	}
	return b.String()
}

// command is the process a call runs: ssh for a remote host, sh for this
// machine's own state root (the same script, so both answer alike).
func (h Host) command(ctx context.Context, bound time.Duration, args []string) *exec.Cmd {
	if h.local {
		return exec.CommandContext(ctx, "/bin/sh", "-c", h.script(args))
	}
	ct := connectTimeout
	if bound > 0 && bound < ct {
		ct = bound
	}
	secs := int((ct + time.Second - 1) / time.Second)
	return exec.CommandContext(ctx, "ssh", "-o", "BatchMode=yes", "-o", fmt.Sprintf("ConnectTimeout=%d", secs),
		"-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "--", h.SSH, h.script(args))
}

// Run makes the call on the host and says what came back.
func (h Host) Run(ctx context.Context, c Call) Reply {
	start := time.Now()
	if c.Bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Bound)
		defer cancel()
	}
	cmd := h.command(ctx, c.Bound, c.Args)
	cmd.WaitDelay = time.Second // a remote's child holding the pipes does not hold the answer
	if c.Bound > 0 {
		// A bounded call ends whole at its bound: ssh and what it started (a
		// ProxyCommand, a jump host's client) are one process group. An
		// unbounded one stays in the terminal's group, where ssh may ask it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	var out bytes.Buffer
	sink := c.Stdout
	if sink == nil {
		sink = &out
	}
	pre := &preamble{next: sink, answered: c.Answered}
	cmd.Stdout = pre
	var errTail tail
	var errBuf bytes.Buffer
	if c.Stderr != nil {
		cmd.Stderr = io.MultiWriter(c.Stderr, &errTail)
	} else {
		cmd.Stderr = io.MultiWriter(&errBuf, &errTail)
	}
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin
	}
	err := cmd.Run()
	r := Reply{Host: h.Name, Stdout: out.Bytes(), Stderr: errBuf.String(), Took: time.Since(start)}
	if c.Stderr != nil {
		r.Stderr = errTail.String()
	}
	r.Version = pre.version
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.Class, r.Reason = TimedOut, fmt.Sprintf("host %s: timed out: no answer within %s", h.Name, c.Bound)
	case errors.As(err, &ee) && !ee.Exited():
		// ssh (or the local shell) ended by a signal: the connection was cut.
		r.Class, r.Reason = Dropped, fmt.Sprintf("host %s: the connection was dropped (%v)", h.Name, ee.ProcessState)
	case errors.As(err, &ee) && ee.ExitCode() == sshExit && !h.local:
		class := Unreachable
		if pre.done {
			class = Dropped // it had answered: the connection ended mid-way
		}
		r.Class, r.Reason = class, fmt.Sprintf("host %s: %s: %s", h.Name, class, lastLine(errTail.String(), "ssh exited 255"))
	case err != nil && !errors.As(err, &ee):
		r.Class, r.Reason = Unreachable, fmt.Sprintf("host %s: could not run ssh: %v", h.Name, err)
	case !pre.done && errors.As(err, &ee) && ee.ExitCode() == 127:
		r.Class, r.Reason = NoPantty, fmt.Sprintf("host %s: no pantty there (%s): set pantty = \"PATH\" in its [hosts.%s] table", h.Name, lastLine(errTail.String(), "command not found"), h.Name)
	case pre.bad || !pre.done:
		r.Class, r.Reason = TooOld, fmt.Sprintf("host %s: too old: its pantty does not say a fleet protocol (%s); install this pantty there", h.Name, lastLine(errTail.String(), "no version line"))
	case pre.version.Fleet < Protocol:
		r.Class, r.Reason = TooOld, fmt.Sprintf("host %s: too old: pantty %s speaks fleet protocol %d, this one needs %d; install this pantty there", h.Name, pre.version.Version, pre.version.Fleet, Protocol)
	default:
		if ee != nil {
			r.Code = ee.ExitCode()
		}
	}
	return r
}

// preamble takes the version line off the front of the remote's stdout and
// passes the rest on.
type preamble struct {
	next     io.Writer
	line     []byte
	answered func()
	done     bool // the version line was read
	bad      bool // the first line was not a version line
	version  Version
}

func (p *preamble) Write(b []byte) (int, error) {
	n := len(b)
	if !p.done && !p.bad {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.line = append(p.line, b...)
			if len(p.line) > 4096 {
				p.bad = true
			}
			return n, nil
		}
		p.line = append(p.line, b[:i]...)
		b = b[i+1:]
		if json.Unmarshal(p.line, &p.version) != nil || p.version.Version == "" {
			p.bad = true
		} else {
			p.done = true
			if p.answered != nil {
				p.answered()
			}
		}
	}
	if p.bad {
		return n, nil // not a fleet pantty: its output means nothing here
	}
	if len(b) > 0 {
		if _, err := p.next.Write(b); err != nil {
			return n, err
		}
	}
	return n, nil
}

// tail keeps the last 4 KiB written: ssh's own reason is its last line.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLine is the last non-empty line of s, or def.
func lastLine(s, def string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(strings.TrimPrefix(lines[len(lines)-1], "pantty: ")); l != "" {
		return l
	}
	return def
}

// quote makes s one word for the remote POSIX shell.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Retryable reports whether a reply's connection may be tried again with the
// same request: it was cut or never made, not refused by the remote pantty.
func (r Reply) Retryable() bool { return r.Class == Dropped || r.Class == Unreachable }
