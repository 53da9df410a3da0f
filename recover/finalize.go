package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// CleanupReport is what a sweep did with one seat's cleanup marker.
type CleanupReport struct {
	Seat     string `json:"seat"`
	State    string `json:"state"` // done, pending (a check failed; retried next sweep), unknown
	Checks   string `json:"checks"`
	Reason   string `json:"reason,omitempty"`
	Attempts int    `json:"attempts"`
}

// gitTimeout bounds each git command of a finalizer check.
const gitTimeout = 10 * time.Second

// finalize processes a seat's cleanup marker, if it has one (the polecat
// finalizer): verify the workdir (checks from seat.toml [done]), stop the seat,
// remove the marker. A failed check or stop leaves the marker with the reason;
// the next sweep tries again. It reports nil when there is no marker.
func (sw *sweeper) finalize(s state.Seat) *CleanupReport {
	m, err := s.CleanupFile().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	r := &CleanupReport{Seat: s.Name}
	if err != nil {
		r.State, r.Reason = Unknown, err.Error()
		return r
	}
	r.Attempts = m.Attempts
	cfg, err := s.LoadConfig()
	if err != nil {
		r.State, r.Reason = "pending", err.Error()
		sw.failCleanup(s, m, r)
		return r
	}
	r.Checks = strings.Join(cfg.Done.Checks, ", ")
	if r.Checks == "" {
		r.Checks = "(none)"
	}
	for _, ch := range cfg.Done.Checks {
		if why := runCheck(ch, cfg.Workdir); why != "" {
			r.State, r.Reason = "pending", ch+": "+why
			sw.failCleanup(s, m, r)
			return r
		}
	}
	if sw.opts.DryRun {
		r.State, r.Reason = "pending", "dry run: would stop the seat and remove cleanup.toml"
		return r
	}
	if err := seat.Stop(s); err != nil {
		r.State, r.Reason = "pending", "stop: "+err.Error()
		sw.failCleanup(s, m, r)
		return r
	}
	if err := s.RemoveCleanup(); err != nil {
		r.State, r.Reason = "pending", "stopped, but removing cleanup.toml failed: "+err.Error()
		return r
	}
	r.State, r.Reason = "done", "workdir verified, seat stopped, marker removed"
	return r
}

// failCleanup records why the cleanup did not happen, on the marker itself.
func (sw *sweeper) failCleanup(s state.Seat, m state.Cleanup, r *CleanupReport) {
	if sw.opts.DryRun {
		return
	}
	m.Attempts++
	m.LastAt = sw.now.UTC()
	m.LastError = r.Reason
	m.LastChecked = r.Checks
	r.Attempts = m.Attempts
	if err := s.CleanupFile().Write(m); err != nil {
		r.Reason += " (and recording it on cleanup.toml failed: " + err.Error() + ")"
	}
}

// runCheck runs one finalizer check in dir and returns why it fails, or "".
func runCheck(check, dir string) string {
	switch check {
	case config.CheckGitClean:
		out, err := git(dir, "status", "--porcelain", "--untracked-files=all")
		if err != nil {
			return err.Error()
		}
		if out = strings.TrimSpace(out); out != "" {
			lines := strings.Split(out, "\n")
			return fmt.Sprintf("%d uncommitted or untracked change(s): %s", len(lines), strings.Join(first(lines, 3), "; "))
		}
	case config.CheckGitPushed:
		if out, err := git(dir, "remote"); err != nil {
			return err.Error()
		} else if strings.TrimSpace(out) == "" {
			return "the repository has no remote: nothing can have been pushed"
		}
		// Commits on any local branch that no remote-tracking branch contains.
		out, err := git(dir, "log", "--branches", "--not", "--remotes", "--format=%h %s")
		if err != nil {
			return err.Error()
		}
		if out = strings.TrimSpace(out); out != "" {
			lines := strings.Split(out, "\n")
			return fmt.Sprintf("%d unpushed commit(s): %s", len(lines), strings.Join(first(lines, 3), "; "))
		}
	default:
		return "unknown check"
	}
	return ""
}

// git runs one read-only git command with a timeout and no prompts.
func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("git %s timed out after %s", args[0], gitTimeout)
	}
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			msg = oneLine(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return string(out), nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
