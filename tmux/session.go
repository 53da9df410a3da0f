package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Pane is one pane as the server reports it. It is the unit pantty watches:
// a seat is alive while its pane is not Dead, and remain-on-exit keeps a
// dead pane around so its exit status can be read.
type Pane struct {
	ID              string // unique pane id, "%3"
	PID             int    // pid of the pane's process (of the last one when Dead)
	Dead            bool   // the pane's process has exited (only seen with remain-on-exit on)
	DeadStatus      int    // exit status when Dead and it exited normally; -1 otherwise/unknown (see StatusPending)
	DeadSignal      int    // signal number when Dead by a signal; 0 otherwise/unknown
	Command         string // pane_current_command (control characters replaced by '?')
	Session         string // session_name (control characters replaced by '?')
	SessionAttached int    // clients attached to the session (session_attached), control-mode watchers included
}

// paneFormat is the -F format parsed by parsePane. The free-form fields are
// cleaned so that the separator and newlines cannot occur in them.
var paneFormat = strings.Join([]string{
	"#{pane_id}", "#{pane_pid}", "#{pane_dead}", "#{pane_dead_status}",
	"#{pane_dead_signal}", "#{session_attached}",
	clean("session_name"), clean("pane_current_command"),
}, sep)

// paneFields is the number of fields in paneFormat.
const paneFields = 8

// parsePane decodes one line produced with paneFormat.
func parsePane(line string) (Pane, error) {
	f, ok := fields(line, paneFields)
	if !ok || !paneIDRe().MatchString(f[0]) {
		return Pane{}, fmt.Errorf("tmux: unexpected pane line %q", line)
	}
	p := Pane{
		ID:              f[0],
		PID:             atoi(f[1], 0),
		Dead:            f[2] == "1",
		DeadStatus:      -1,
		SessionAttached: atoi(f[5], 0),
		Session:         f[6],
		Command:         f[7],
	}
	if p.Dead {
		p.DeadStatus = atoi(f[3], -1)
		p.DeadSignal = atoi(f[4], 0)
	}
	return p, nil
}

// parseOnePane decodes the single pane line a creating command printed.
func parseOnePane(out string, args []string) (Pane, error) {
	ls := lines(out)
	if len(ls) != 1 {
		return Pane{}, &Error{Args: summarize(args), Stderr: fmt.Sprintf("expected one pane line, got %q", out)}
	}
	p, err := parsePane(ls[0])
	if err != nil {
		return Pane{}, &Error{Args: summarize(args), Err: err}
	}
	return p, nil
}

// NewSessionOpts describes a session holding one pane that runs one
// program. Only what pantty needs is exposed.
type NewSessionOpts struct {
	Name          string   // session name; must match ^[A-Za-z0-9_-]+$ (tmux rewrites '.' and ':')
	Dir           string   // start directory (-c); must exist; empty means tmux's default
	Width, Height int      // initial size (-x -y); 200x50 when zero
	Argv          []string // the pane's program and arguments; empty means the default shell
	Env           []string // extra "KEY=VALUE" entries for the session environment (-e)
	RemainOnExit  bool     // keep the pane, dead, when its program exits (set in the same call)
}

// paneCommand turns a program argv into the words given to tmux after
// "--". tmux 3.x execs the words directly when there are two or more, but
// hands a single word to "$SHELL -c", where it would be shell-interpreted
// (spaces, $, quotes, globs). A single word w is therefore passed as
// /bin/sh -c 'exec "$0"' w: the shell only ever sees a fixed script, w
// arrives as $0 untouched, and exec replaces the shell so the pane's pid is
// the program's pid.
func paneCommand(words []string, args []string) ([]string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	if words[0] == "" || strings.HasPrefix(words[0], "-") {
		return nil, invalid("program name "+fmt.Sprintf("%q", words[0])+" is empty or starts with '-'", args)
	}
	if len(words) == 1 {
		words = []string{"/bin/sh", "-c", `exec "$0"`, words[0]}
	}
	return append([]string{"--"}, argv(words)...), nil
}

// startDir checks a start directory and prepares it for -c. tmux 3.3a
// silently starts the pane somewhere else when the directory does not
// exist, which for pantty would mean an agent working in the wrong tree, so
// it must exist. It is made absolute (tmux would resolve a relative one
// against its own idea of the working directory), and '#' is escaped
// because tmux expands -c as a format.
func startDir(dir string, args []string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", invalid(fmt.Sprintf("start directory %q: %v", dir, err), args)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", invalid(fmt.Sprintf("start directory %q is not an existing directory", dir), args)
	}
	return arg(formatLiteral(abs)), nil
}

// envArgs turns KEY=VALUE entries into -e flags, refusing malformed ones.
func envArgs(env []string, args []string) ([]string, error) {
	var out []string
	for _, kv := range env {
		if i := strings.IndexByte(kv, '='); i <= 0 {
			return nil, invalid(fmt.Sprintf("environment entry %q is not KEY=VALUE", kv), args)
		}
		out = append(out, "-e", arg(kv))
	}
	return out, nil
}

// NewSession creates a detached session with one pane running o.Argv and
// returns that pane (id and pid come from the same call via -P -F, so there
// is no window in which the pane exists but we do not know it). Starting the
// server if needed is part of the call. With RemainOnExit, remain-on-exit is
// set on the window in the same tmux invocation; tmux runs both commands
// before it processes the child's exit, so even a program that exits at
// once leaves a dead pane behind instead of a vanished session.
func (c *Client) NewSession(ctx context.Context, o NewSessionOpts) (Pane, error) {
	args := []string{"new-session", "-d", "-P", "-F", paneFormat, "-s", o.Name}
	if err := checkSession(o.Name, args); err != nil {
		return Pane{}, err
	}
	if o.Dir != "" {
		dir, err := startDir(o.Dir, args)
		if err != nil {
			return Pane{}, err
		}
		args = append(args, "-c", dir)
	}
	w, h := o.Width, o.Height
	if w <= 0 {
		w = 200
	}
	if h <= 0 {
		h = 50
	}
	args = append(args, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h))
	env, err := envArgs(o.Env, args)
	if err != nil {
		return Pane{}, err
	}
	args = append(args, env...)
	cmd, err := paneCommand(o.Argv, args)
	if err != nil {
		return Pane{}, err
	}
	args = append(args, cmd...)
	if o.RemainOnExit {
		args = append(args, ";", "set-option", "-w", "-t", "="+o.Name+":", "remain-on-exit", "on")
	}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return Pane{}, err
	}
	return parseOnePane(out, args)
}

// RespawnPane restarts the program in a pane (killing it first if it is
// still running, -k) and returns the pane with its new pid, read in the
// same tmux invocation. Empty argv reruns the pane's previous command;
// empty dir keeps tmux's default, otherwise it must exist. The pane keeps its id, so everything that
// tracks "%N" keeps working.
func (c *Client) RespawnPane(ctx context.Context, paneID string, argv []string, dir string) (Pane, error) {
	args := []string{"respawn-pane", "-k"}
	if err := checkPane(paneID, append(args, "-t", paneID)); err != nil {
		return Pane{}, err
	}
	if dir != "" {
		d, err := startDir(dir, args)
		if err != nil {
			return Pane{}, err
		}
		args = append(args, "-c", d)
	}
	args = append(args, "-t", paneID)
	cmd, err := paneCommand(argv, args)
	if err != nil {
		return Pane{}, err
	}
	args = append(args, cmd...)
	args = append(args, ";", "display-message", "-p", "-t", paneID, paneFormat)
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return Pane{}, err
	}
	return parseOnePane(out, args)
}

// KillSession kills exactly the session called name ("=name", so "a" never
// matches "ab"). A missing session is ErrNoTarget; no server, ErrNoServer.
func (c *Client) KillSession(ctx context.Context, name string) error {
	args := []string{"kill-session", "-t", "=" + name}
	if err := checkSession(name, args); err != nil {
		return err
	}
	_, err := c.run(ctx, nil, args...)
	return err
}

// KillServer kills the whole server and every session on it. It returns
// ErrNoServer when none was running, which callers cleaning up can ignore.
func (c *Client) KillServer(ctx context.Context) error {
	_, err := c.run(ctx, nil, "kill-server")
	return err
}

// HasSession reports whether the session called exactly name exists. A
// missing session is (false, nil). When no server is running the answer is
// (false, error matching ErrNoServer) so the caller can decide whether that
// means "dead" for its purposes; any other failure is (false, err) and means
// "unknown".
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	args := []string{"has-session", "-t", "=" + name}
	if err := checkSession(name, args); err != nil {
		return false, err
	}
	_, err := c.run(ctx, nil, args...)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoTarget):
		return false, nil
	default:
		return false, err
	}
}

// ListPanes returns every pane of every session in ONE tmux call, so the
// snapshot is consistent. No server is ErrNoServer (an empty server exits,
// so "no panes" is always reported that way).
func (c *Client) ListPanes(ctx context.Context) ([]Pane, error) {
	args := []string{"list-panes", "-a", "-F", paneFormat}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	var panes []Pane
	for _, l := range lines(out) {
		p, err := parsePane(l)
		if err != nil {
			return nil, &Error{Args: summarize(args), Err: err}
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// hookRe is the accepted hook name form, e.g. "pane-died" or "pane-died[1]".
var hookRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]*(\[[0-9]+\])?$`) })

// SetHook sets a hook on exactly the session called session. command is a
// tmux command string, parsed by tmux when the hook is set (an unknown
// command or syntax error is returned here; tmux 3.3a quietly accepts an
// unterminated quote); for run-shell, splice values in with ShellQuote and
// remember run-shell also expands #{formats} such as #{hook_pane}.
// pane-died only fires for panes with remain-on-exit on, and only once
// tmux has the exit status: on tmux < 3.5 it can be lost (see Reap), so a
// hook must never be the only way pantty learns of a death.
func (c *Client) SetHook(ctx context.Context, session, hook, command string) error {
	// set-hook resolves -t as a pane target in tmux 3.3a, where a bare
	// "=name" fails ("no such window"); "=name:" is exact and works.
	args := []string{"set-hook", "-t", "=" + session + ":", hook, arg(command)}
	if err := checkSession(session, args); err != nil {
		return err
	}
	if !hookRe().MatchString(hook) || command == "" {
		return invalid("hook name must match "+hookRe().String()+" and command must be non-empty", args)
	}
	_, err := c.run(ctx, nil, args...)
	return err
}

// SetOption sets option name to value. target must be exact: "%N" (pane),
// "@N" (window), "$N" (session id), "=name" (session) or "=name:" (that
// session's current window); an empty target sets the global value (-g).
// The option's scope (server/session/window/pane) is inferred by tmux from
// its name; user options ("@...") default to session scope. "=name" is sent
// as "=name:" because tmux 3.3a resolves set-option's -t as a pane target,
// where a bare "=name" fails; the session is the same either way.
func (c *Client) SetOption(ctx context.Context, target, name, value string) error {
	args := []string{"set-option"}
	switch {
	case target == "":
		args = append(args, "-g")
	case strings.HasPrefix(target, "=") && !strings.HasSuffix(target, ":"):
		args = append(args, "-t", target+":")
	default:
		args = append(args, "-t", target)
	}
	args = append(args, "--", name, arg(value))
	if target != "" && !targetRe().MatchString(target) {
		return invalid("target "+fmt.Sprintf("%q", target)+" is not an exact target", args)
	}
	if name == "" || strings.HasPrefix(name, "-") || strings.ContainsAny(name, " \t\n;") {
		return invalid("option name "+fmt.Sprintf("%q", name)+" is malformed", args)
	}
	_, err := c.run(ctx, nil, args...)
	return err
}

// ClientInfo is one client attached to the server. pantty needs it to know
// whether a human is looking at a seat and to tell its own control-mode
// watchers (see WatchSession) apart from real terminals.
type ClientInfo struct {
	TTY         string // client_tty; empty for control-mode clients
	PID         int    // client process id
	Session     string // attached session name
	ControlMode bool   // client_control_mode: a tmux -C client (e.g. a WatchSession watcher)
	ReadOnly    bool   // client_readonly
}

// clientFormat is the -F format parsed by Clients.
var clientFormat = strings.Join([]string{
	"#{client_pid}", "#{client_control_mode}", "#{client_readonly}",
	clean("client_tty"), clean("client_session"),
}, sep)

// Clients lists the clients attached to the server in one call. No server
// is ErrNoServer.
func (c *Client) Clients(ctx context.Context) ([]ClientInfo, error) {
	args := []string{"list-clients", "-F", clientFormat}
	out, err := c.run(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	var cs []ClientInfo
	for _, l := range lines(out) {
		f, ok := fields(l, 5)
		if !ok {
			return nil, &Error{Args: summarize(args), Stderr: fmt.Sprintf("unexpected client line %q", l)}
		}
		cs = append(cs, ClientInfo{
			PID:         atoi(f[0], 0),
			ControlMode: f[1] == "1",
			ReadOnly:    f[2] == "1",
			TTY:         f[3],
			Session:     f[4],
		})
	}
	return cs, nil
}
