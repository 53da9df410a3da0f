package tmux

import (
	"errors"
	"strings"
)

// The error classes below exist because pantty must never confuse "the seat
// is dead" with "we could not look". Every failed call returns an *Error
// whose class can be tested with errors.Is; an unclassified failure matches
// none of them and must be treated as "unknown", not as "gone".
var (
	// ErrNoServer means nothing is listening on the socket: the socket file
	// is missing, stale (connection refused), or the server exited while we
	// talked to it. Every session that lived on that server is gone.
	ErrNoServer = errors.New("tmux: no server running")

	// ErrNoTarget means the server answered and said the session, window or
	// pane named by the call does not exist.
	ErrNoTarget = errors.New("tmux: target does not exist")

	// ErrTimeout means the tmux call did not finish within its deadline and
	// was killed: the answer is unknown, nothing may be concluded from it.
	ErrTimeout = errors.New("tmux: call timed out")

	// ErrInvalid means an argument was refused before tmux was run (a pane
	// id that is not "%N", a session name tmux would silently rewrite, ...).
	// It is a programming or input error, never a statement about tmux.
	ErrInvalid = errors.New("tmux: invalid argument")
)

// Error describes one failed tmux invocation. It keeps the class (one of the
// sentinels above, or nil when tmux failed in a way we do not recognise), a
// short summary of the argv and tmux's own stderr, so that a log line is
// enough to reproduce the call by hand.
type Error struct {
	Kind   error    // ErrNoServer, ErrNoTarget, ErrTimeout, ErrInvalid, or nil if unclassified
	Args   []string // tmux arguments after the global flags, long words shortened
	Stderr string   // tmux's stderr, trimmed
	Err    error    // underlying cause (*exec.ExitError, context error, exec failure); may be nil
}

// Error renders "tmux <args>: <class>: <stderr or cause>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("tmux")
	for _, a := range e.Args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Kind.Error(), "tmux: "))
	}
	switch {
	case e.Stderr != "":
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	case e.Err != nil:
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes both the class and the underlying cause, so that
// errors.Is(err, ErrTimeout) and errors.Is(err, context.DeadlineExceeded)
// both hold for a timed-out call.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// invalid builds an ErrInvalid error for an argument refused before tmux ran.
func invalid(msg string, args []string) error {
	return &Error{Kind: ErrInvalid, Args: summarize(args), Stderr: msg}
}

// noServerPatterns are tmux 3.x messages meaning nothing answers on the
// socket. "error connecting to" is only a no-server signal together with
// one of the errno texts checked in classify.
var noServerPatterns = []string{
	"no server running on",
	"server exited unexpectedly",
	"lost server",
	// A command that starts a server (attach-session does) finds it
	// empty; an empty server exits at once, so nothing was running.
	"no sessions",
}

// noTargetPatterns are tmux 3.x messages meaning the server is up but the
// named session, window or pane is not.
var noTargetPatterns = []string{
	"can't find session",
	"can't find window",
	"can't find pane",
	"no such session",
	"no such window",
	"no such pane",
	"session not found",
	"window not found",
	"pane not found",
}

// classify maps tmux's stderr to one of the sentinel classes, or nil when
// the message is not one we can interpret safely.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	for _, p := range noServerPatterns {
		if strings.Contains(s, p) {
			return ErrNoServer
		}
	}
	if strings.Contains(s, "error connecting to") &&
		(strings.Contains(s, "no such file or directory") || strings.Contains(s, "connection refused")) {
		return ErrNoServer
	}
	for _, p := range noTargetPatterns {
		if strings.Contains(s, p) {
			return ErrNoTarget
		}
	}
	return nil
}

// summarize copies argv for error messages, shortening long words (pasted
// or literal text can be large and should not flood logs).
func summarize(args []string) []string {
	const maxWord = 48
	out := make([]string, 0, len(args))
	for _, a := range args {
		if len(a) > maxWord {
			a = a[:maxWord] + "..."
		}
		out = append(out, a)
	}
	return out
}
