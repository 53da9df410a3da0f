// Package tmux drives a private tmux server on behalf of pantty.
//
// pantty keeps long-running AI coding sessions ("seats") in tmux panes so
// they survive the terminal that started them. The package exists to make
// every interaction with that server explicit and classifiable:
//
//   - every call names the server by absolute socket path (-S), never the
//     user's default server, and ignores the user's tmux.conf (-f /dev/null);
//   - every call passes an explicit argv (no shell) and exact targets
//     ("=session", "%pane"), so "a" can never hit "ab";
//   - every failure is classified (ErrNoServer, ErrNoTarget, ErrTimeout),
//     because pantty must tell "the seat is dead" from "we could not look".
//
// The package deliberately imports nothing from pantty.
package tmux

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultTimeout bounds a single tmux call when Client.Timeout is zero. A
// healthy server answers in milliseconds; a call that takes seconds means
// the server is wedged, and the caller must learn that as ErrTimeout rather
// than hang.
const DefaultTimeout = 5 * time.Second

// Client talks to one tmux server, identified by its socket path. It holds
// no connection: each method runs one short-lived tmux client process, so a
// Client is safe for concurrent use and costs nothing to keep around.
type Client struct {
	Socket  string        // absolute socket path; every call uses -S Socket
	Timeout time.Duration // per call; DefaultTimeout when zero
	Binary  string        // tmux executable; "tmux" (looked up in PATH) when empty
}

// New returns a Client for the server at socket (see SocketPath) with the
// default timeout and binary.
func New(socket string) *Client {
	return &Client{Socket: socket}
}

// binary returns the tmux executable to run.
func (c *Client) binary() string {
	if c.Binary == "" {
		return "tmux"
	}
	return c.Binary
}

// timeout returns the per-call deadline.
func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// baseArgs are the global flags every invocation carries: -u forces UTF-8
// regardless of the caller's locale, -f /dev/null keeps the user's
// tmux.conf from changing behaviour (it is only read when a call starts the
// server), -S pins the server.
func (c *Client) baseArgs() []string {
	return []string{"-u", "-f", "/dev/null", "-S", c.Socket}
}

// command builds an *exec.Cmd for tmux with the given arguments. The child
// gets its own process group so that a timeout can kill it together with
// anything it spawned, and a minimal environment (cleanEnv). The context's end
// kills the group.
func (c *Client) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.binary(), append(c.baseArgs(), args...)...)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 500 * time.Millisecond
	return c.isolate(cmd)
}

// longCommand is command for a client that lives as long as its caller wants
// (a control-mode watch): no context, the caller ends it.
func (c *Client) longCommand(args []string) *exec.Cmd {
	cmd := c.isolate(exec.Command(c.binary(), append(c.baseArgs(), args...)...))
	// A long-lived client (a control-mode client) dies with the process that
	// started it. Orphaned by a driver killed with SIGKILL, a control client
	// stayed attached, and tmux 3.3a, told to exit, waited for it forever:
	// the server refused every later client ("server exited unexpectedly")
	// and `seat stop` left it running (measured 2026-12-06 under load).
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd
}

// isolate gives the child its own process group and a clean environment.
func (c *Client) isolate(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = cleanEnv()
	return cmd
}

// killGroup SIGKILLs the process group led by cmd's process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// clientEnv lists the variables a tmux client gets from the caller's
// environment; everything else stays out. A client that starts the server
// passes its whole environment on: the server process keeps it
// (/proc/PID/environ) and copies it into the global environment that
// `show-environment -g` prints to any process of the user with the socket. A
// caller's secrets (an API key, a seat's pass_env) must not land there: what a
// pane's program needs it gets otherwise (pantty's pane process reads its
// launch record). TMUX and TMUX_PANE are left out too: when pantty itself
// runs inside tmux they would make tmux treat our clients as nested and pick
// "current" targets from the outer server.
var clientEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TMPDIR"}

// cleanEnv is the caller's environment reduced to clientEnv and the locale
// (LC_*), which tmux reads at start.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LC_") || slices.Contains(clientEnv, k) {
			out = append(out, kv)
		}
	}
	return out
}

// run is the single place a tmux command is executed. It applies the
// per-call timeout, feeds stdin when given, and turns every failure into an
// *Error: a deadline becomes ErrTimeout (the process group is killed),
// stderr is classified into ErrNoServer / ErrNoTarget. It returns stdout.
func (c *Client) run(ctx context.Context, stdin []byte, args ...string) (string, error) {
	if c.Socket == "" {
		return "", &Error{Kind: ErrInvalid, Args: summarize(args), Stderr: "Client.Socket is empty"}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cmd := c.command(cctx, args)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.String(), nil
	}
	e := &Error{Args: summarize(args), Stderr: strings.TrimSpace(stderr.String()), Err: err}
	if cerr := cctx.Err(); cerr != nil {
		e.Err = cerr
		if errors.Is(cerr, context.DeadlineExceeded) {
			e.Kind = ErrTimeout
		}
		return "", e
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		e.Kind = classify(e.Stderr)
	}
	return "", e
}

// paneIDRe is the only pane target form accepted: tmux's unique pane id.
var paneIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^%[0-9]+$`) })

// sessionNameRe is the session name form accepted. tmux silently rewrites
// '.' and ':' to '_', which would break exact "=name" targeting later, and
// other characters invite quoting trouble in hooks and formats.
var sessionNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// checkPane refuses anything but "%N" before tmux is run, so a malformed id
// can never be resolved by tmux's fuzzy target lookup.
func checkPane(id string, args []string) error {
	if !paneIDRe().MatchString(id) {
		return invalid("pane id "+strconv.Quote(id)+" does not match ^%[0-9]+$", args)
	}
	return nil
}

// checkSession refuses session names that tmux would rewrite or that could
// be mistaken for something else in a target.
func checkSession(name string, args []string) error {
	if !sessionNameRe().MatchString(name) {
		return invalid("session name "+strconv.Quote(name)+" does not match ^[A-Za-z0-9_-]+$", args)
	}
	return nil
}

// targetRe lists the exact target forms SetOption accepts: a pane, window
// or session id, or an exact session name optionally followed by ':' (its
// current window).
var targetRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(%[0-9]+|@[0-9]+|\$[0-9]+|=[A-Za-z0-9_-]+:?)$`) })

// arg protects one free-form argument from tmux's command-line parser.
// tmux 3.x treats any argument that ENDS in ';' as a command separator (the
// ';' is stripped and a new command begins), and turns a trailing "\;" into
// a literal ';'. Inserting a backslash before a trailing ';' therefore makes
// every word arrive exactly as given; nothing else in an argv word is
// special to tmux.
func arg(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}

// argv applies arg to every word.
func argv(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = arg(w)
	}
	return out
}

// formatLiteral escapes a value for a tmux argument that tmux expands as a
// format (the -c start directory): "##" is a literal '#'.
func formatLiteral(s string) string {
	return strings.ReplaceAll(s, "#", "##")
}

// sep separates fields in -F output. tmux does not escape it, so free-form
// fields are passed through clean() which replaces control characters.
const sep = "\x1f"

// clean wraps a format variable so that control characters in it (a
// process can name itself anything, including "\n" or sep) are replaced by
// '?', keeping one record per line and a fixed field count. The regex uses
// a literal byte range because "[[:cntrl:]]" contains ':' which tmux's
// modifier parser would split on.
func clean(variable string) string {
	return "#{s/[\x01-\x1f\x7f]/?/:" + variable + "}"
}

// fields splits one -F output line, requiring exactly n fields.
func fields(line string, n int) ([]string, bool) {
	f := strings.Split(line, sep)
	return f, len(f) == n
}

// lines splits tmux output into non-empty lines.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// atoi parses an integer field, returning def for empty or malformed text.
func atoi(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}
