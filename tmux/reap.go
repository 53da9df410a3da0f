package tmux

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
)

// ServerPID returns the process id of the tmux server, asked of the server
// itself (#{pid}). No server is ErrNoServer.
func (c *Client) ServerPID(ctx context.Context) (int, error) {
	args := []string{"display-message", "-p", "#{pid}"}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		return 0, &Error{Args: summarize(args), Stderr: "unexpected pid " + strconv.Quote(out)}
	}
	return pid, nil
}

// Reap sends SIGCHLD to the tmux server so that it collects exited pane
// processes whose SIGCHLD it missed.
//
// Why this exists: tmux before 3.5 built with libutempter (Debian's 3.3a
// is) can lose a pane's SIGCHLD. The server still sees the pty close, so
// the pane reads Dead, but its exit status stays unknown (DeadStatus -1,
// DeadSignal 0), the process stays a zombie, and with remain-on-exit the
// pane-died hook does NOT fire, until some other child of the server exits.
// In our tests this hit roughly one pane exit in seven. The server's
// SIGCHLD handler only does waitpid(WNOHANG), so an extra SIGCHLD is
// harmless; after it the status appears and pane-died fires.
//
// Call it whenever ListPanes shows a pane with StatusPending, and never
// rely on pane-died alone to learn that a pane died.
func (c *Client) Reap(ctx context.Context) error {
	pid, err := c.ServerPID(ctx)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGCHLD); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return &Error{Kind: ErrNoServer, Args: []string{"kill", "-CHLD", strconv.Itoa(pid)}, Err: err}
		}
		return &Error{Args: []string{"kill", "-CHLD", strconv.Itoa(pid)}, Err: err}
	}
	return nil
}

// StatusPending reports a pane that is Dead but whose exit status tmux has
// not collected yet (see Reap): it is certainly dead, but how it ended is
// not known, and its pane-died hook has not run.
func (p Pane) StatusPending() bool {
	return p.Dead && p.DeadStatus < 0 && p.DeadSignal == 0
}
