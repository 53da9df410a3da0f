package sim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// settings is the subset of Claude Code's settings.json the simulator reads.
type settings struct {
	Hooks      map[string][]hookGroup `json:"hooks"`
	StatusLine *statusLineSetting     `json:"statusLine"`
}

type hookGroup struct {
	Matcher string    `json:"matcher"`
	Hooks   []hookCmd `json:"hooks"`
}

type hookCmd struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // seconds; 0 means hookTimeout
}

type statusLineSetting struct {
	Type    string `json:"type"`
	Command string `json:"command"`
}

// hookTimeout bounds a hook like Claude does, so a stuck hook cannot wedge
// the simulator forever.
const hookTimeout = 10 * time.Second

// hookResult gathers what the hooks of one event said.
type hookResult struct {
	stdout  string // concatenated stdout of hooks that exited 0
	blocked bool   // some hook exited 2
	stderr  string // stderr of the first blocking hook
}

// runHooks runs every command hook of event whose matcher accepts match,
// one after the other (Claude runs them in parallel; sequential keeps the
// simulator deterministic), each with payload on stdin.
func (e *engine) runHooks(event, match string, payload map[string]any) hookResult {
	var res hookResult
	groups := e.cfg.settings.Hooks[event]
	if len(groups) == 0 {
		return res
	}
	payload["session_id"] = e.sessionID
	payload["transcript_path"] = e.transcriptPath()
	payload["cwd"] = e.cfg.cwd
	payload["hook_event_name"] = event
	payload["permission_mode"] = e.cfg.permissionMode
	data, _ := marshal(payload)
	for _, g := range groups {
		if !matcherAccepts(g.Matcher, match) {
			continue
		}
		for _, h := range g.Hooks {
			if h.Type != "" && h.Type != "command" || h.Command == "" {
				continue
			}
			timeout := hookTimeout
			if h.Timeout > 0 {
				timeout = time.Duration(h.Timeout) * time.Second
			}
			out, errOut, code := runShell(h.Command, e.cfg.cwd, data, timeout)
			switch code {
			case 0:
				res.stdout += out
			case 2:
				if !res.blocked {
					res.blocked, res.stderr = true, strings.TrimSpace(errOut)
				}
			}
		}
	}
	return res
}

// matcherAccepts follows Claude: empty or "*" matches everything, anything
// else is a regular expression over the event's match value (source,
// trigger, reason, notification type).
func matcherAccepts(matcher, value string) bool {
	if matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return matcher == value
	}
	return re.MatchString(value)
}

// runShell runs command with sh -c in its own process group, so a timeout
// kills the whole tree, and returns stdout, stderr and the exit code (-1 when
// it could not run or was killed).
func runShell(command, dir string, stdin []byte, timeout time.Duration) (string, string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+dir)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			code = ee.ExitCode()
		}
	}
	return out.String(), errOut.String(), code
}

func (e *engine) sessionStartHook(source string) {
	res := e.runHooks("SessionStart", source, map[string]any{"source": source, "model": e.cfg.model})
	// Claude adds SessionStart stdout to the context of the next request.
	e.pending += res.stdout
}

func (e *engine) sessionEndHook(reason string) {
	e.runHooks("SessionEnd", reason, map[string]any{"reason": reason})
}

func (e *engine) notificationHook(kind, message string) {
	e.runHooks("Notification", kind, map[string]any{"notification_type": kind, "message": message})
}

// userPromptSubmit fires the hook for one submission under a fresh prompt
// id; exit 2 blocks the prompt (Claude erases it and shows the stderr).
func (e *engine) userPromptSubmit(prompt string) (promptID string, res hookResult) {
	promptID = newUUID()
	res = e.runHooks("UserPromptSubmit", "", map[string]any{"prompt_id": promptID, "prompt": prompt})
	return promptID, res
}

// statusLine runs the statusLine command with Claude's payload and returns
// the first line it printed ("" when none is configured).
func (e *engine) statusLine() string {
	sl := e.cfg.settings.StatusLine
	if sl == nil || sl.Command == "" || sl.Type != "" && sl.Type != "command" {
		return ""
	}
	// Like Claude before its first request, a fresh (or cleared) session
	// reports no current usage at all.
	var cur, pct, rem any
	occ := e.st.Last.total()
	if occ > 0 {
		p := float64(occ) * 100 / float64(e.cfg.window)
		cur, pct, rem = e.st.Last, p, 100-p
		if e.cfg.broken["cumulative"] {
			cur = usage{InputTokens: e.st.TotalInput}
		}
	}
	payload := map[string]any{
		"hook_event_name": "Status",
		"session_id":      e.sessionID,
		"transcript_path": e.transcriptPath(),
		"cwd":             e.cfg.cwd,
		"version":         Version,
		"model":           map[string]any{"id": e.cfg.model, "display_name": e.cfg.model},
		"workspace":       map[string]any{"current_dir": e.cfg.cwd, "project_dir": e.cfg.cwd},
		"context_window": map[string]any{
			"context_window_size":  e.cfg.window,
			"current_usage":        cur,
			"used_percentage":      pct,
			"remaining_percentage": rem,
			"total_input_tokens":   e.st.TotalInput,
			"total_output_tokens":  e.st.TotalOutput,
		},
		"exceeds_200k_tokens": occ > 200000,
		"cost":                map[string]any{"total_cost_usd": e.st.CostUSD},
	}
	data, _ := marshal(payload)
	out, _, _ := runShell(sl.Command, e.cfg.cwd, data, hookTimeout)
	line, _, _ := strings.Cut(strings.TrimRight(out, "\n"), "\n")
	return line
}
