// Package seattest sets up real seats for tests: a private PANTTY_HOME and tmux
// socket per test, the pantty binary built once per test process, and the
// simulator with fast timings. Tests drive the real CLI as real processes, so
// every test is a few lines about behaviour, not set-up.
package seattest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds ./cmd/pantty once per test process into tmuxtest.Root(); the
// driver, the pane's exec step and the hooks all run this binary.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = err
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		binPath = filepath.Join(tmuxtest.Root(), "pantty")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/pantty")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, b)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// FastSim is the simulator's environment for bulk tests: every timing small.
var FastSim = map[string]string{
	"PANTTY_SIM_STARTUP": "50ms",
	"PANTTY_SIM_COMMIT":  "10ms",
	"PANTTY_SIM_TURN":    "20ms",
}

// Harness is one seat under test with its own state root and tmux server.
type Harness struct {
	T      testing.TB
	Name   string
	Home   string
	Socket string
	Work   string
	Bin    string
}

// Option adjusts a Harness before its seat.toml is written.
type Option func(*options)

type options struct {
	env   map[string]string
	extra []string
}

// Env adds variables to the seat's [env] (the simulator reads its knobs there).
func Env(kv map[string]string) Option {
	return func(c *options) {
		for k, v := range kv {
			c.env[k] = v
		}
	}
}

// TOML appends top-level lines to seat.toml (before the [tmux] table).
func TOML(lines ...string) Option {
	return func(c *options) { c.extra = append(c.extra, lines...) }
}

// New makes a seat named name on the simulator, not yet started, with its
// fast knobs (FastSim) under the options. Cleanup stops it, kills its tmux
// server and any driver still recorded.
func New(t testing.TB, name string, opts ...Option) *Harness {
	t.Helper()
	return NewHarness(t, name, "sim", append([]Option{Env(FastSim)}, opts...)...)
}

// Seat names the seat's directory.
func (h *Harness) Seat() state.Seat {
	s, err := state.Open(h.Home, h.Name)
	if err != nil {
		h.T.Fatal(err)
	}
	return s
}

// Tmux is a client on the seat's private server.
func (h *Harness) Tmux() *tmux.Client { return tmux.New(h.Socket) }

// Env is the environment every pantty process of this harness runs with.
func (h *Harness) Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "TMUX", k == "TMUX_PANE", strings.HasPrefix(k, "PANTTY_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, config.HomeEnv+"="+h.Home, "PANTTY_TMUX_SOCKET="+h.Socket)
}

// Result is one finished pantty process.
type Result struct {
	Code           int
	Stdout, Stderr string
	Err            error // the process could not run at all (RunEnv only)
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
}

// Run runs the pantty binary with args and empty stdin.
func (h *Harness) Run(args ...string) Result { return h.RunStdin("", args...) }

// RunStdin runs the pantty binary with args and the given stdin.
func (h *Harness) RunStdin(stdin string, args ...string) Result {
	h.T.Helper()
	return h.runWith(h.Env(), stdin, args)
}

// runWith runs the pantty binary with exactly env; a process that cannot run fails the test.
func (h *Harness) runWith(env []string, stdin string, args []string) Result {
	h.T.Helper()
	r := h.exec(env, stdin, args)
	if r.Err != nil {
		h.T.Fatalf("run pantty %v: %v", args, r.Err)
	}
	return r
}

// exec runs the pantty binary with exactly env and stdin, bounded; a
// process that cannot run at all is Result.Err (code -1), not a failure:
// callers on other goroutines cannot fail the test.
func (h *Harness) exec(env []string, stdin string, args []string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return Result{Code: -1, Stderr: err.Error(), Err: err}
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// Start runs `pantty seat start` and fails the test unless it exits 0.
func (h *Harness) Start() Result {
	h.T.Helper()
	r := h.Run("seat", "start", h.Name)
	if r.Code != 0 {
		h.T.Fatalf("seat start: %s\ndriver.log:\n%s", r, h.DriverLog())
	}
	return r
}

// Send stores one message with an explicit id and fails the test otherwise.
func (h *Harness) Send(id, text string) {
	h.T.Helper()
	r := h.RunStdin(text, "seat", "send", h.Name, "--id", id)
	if r.Code != 0 {
		h.T.Fatalf("seat send %s: %s", id, r)
	}
}

// DriverLog returns driver.log, for failure messages.
func (h *Harness) DriverLog() string {
	b, _ := os.ReadFile(h.Seat().DriverLogPath())
	return string(b)
}

// KillDriver ends the seat's driver with SIGKILL (its harness keeps
// running) and returns once owner.toml no longer names a live process. A
// signal is delivered, not obeyed at once: a 'seat start' right after the
// kill can still find the driver live under load and answer "already
// running" (seen in a full run, 2026-12-06).
func (h *Harness) KillDriver() {
	h.T.Helper()
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		h.T.Fatalf("kill driver pid %d: %v", o.PID, err)
	}
	h.WaitFor(fmt.Sprintf("the killed driver (pid %d) to be gone", o.PID), 30*time.Second, func() bool { return !o.Live() })
}

// Owner returns owner.toml.
func (h *Harness) Owner() state.Owner {
	o, err := h.Seat().OwnerFile().Read()
	if err != nil {
		h.T.Fatalf("owner.toml: %v", err)
	}
	return o
}

// Session returns session.toml.
func (h *Harness) Session() state.Session {
	s, err := h.Seat().SessionFile().Read()
	if err != nil {
		h.T.Fatalf("session.toml: %v", err)
	}
	return s
}

// WaitFor waits, on fsnotify events in the seat's state directories, until cond
// is true or the deadline passes (then the test fails with what).
func (h *Harness) WaitFor(what string, limit time.Duration, cond func() bool) {
	h.T.Helper()
	s := h.Seat()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		h.T.Fatal(err)
	}
	defer w.Close()
	for _, d := range append([]string{s.Dir, s.MsgsDir(), s.SeenDir(), s.EventsDir(), s.HarnessDir(), h.Work}, s.StatusDirs()...) {
		w.Add(d)
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	// A slow tick as well: some conditions (a process exiting) make no file event.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-w.Events:
		case <-w.Errors:
		case <-tick.C:
		case <-deadline.C:
			h.T.Fatalf("timed out after %s waiting for %s\ndriver.log:\n%s", limit, what, h.DriverLog())
		}
	}
}

// WaitFinal waits until every id is processed or failed.
func (h *Harness) WaitFinal(limit time.Duration, ids ...string) {
	h.T.Helper()
	s := h.Seat()
	h.WaitFor(fmt.Sprintf("%d message(s) final", len(ids)), limit, func() bool {
		for _, id := range ids {
			st, err := s.ReadStatus(id)
			if err != nil || !inbox.Final(st.State) {
				return false
			}
		}
		return true
	})
}

// Status reads one message's status.
func (h *Harness) Status(id string) inbox.Status {
	st, err := h.Seat().ReadStatus(id)
	if err != nil {
		h.T.Fatal(err)
	}
	return st
}

func (h *Harness) cleanup() {
	s := h.Seat()
	if o, live, _ := s.LiveOwner(); live {
		h.RunStdin("", "seat", "stop", h.Name)
		if o.Live() {
			syscall.Kill(o.PID, syscall.SIGKILL)
		}
	}
	if sess, err := s.SessionFile().Read(); err == nil {
		proc.KillGroup(sess.PanePID)
	}
	proc.EndLaunch(s, 0) // what escaped the pane's group (a stubborn harness, a setsid helper)
	h.killServer()
	h.checkTransitions()
}

// killServer kills the seat's tmux server and makes sure it is gone: a
// kill-server that timed out under a loaded machine left a server (and the
// driver's control client) running past the test once, which the package's
// leak check then reported. Up to three tries, each bounded; what still
// fails is logged with tmux's words.
func (h *Harness) killServer() {
	var err error
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = h.Tmux().KillServer(ctx)
		cancel()
		if err == nil || errors.Is(err, tmux.ErrNoServer) {
			return
		}
	}
	h.T.Logf("tmux kill-server on %s: %v", h.Socket, err)
}

// checkTransitions fails the test when the driver made a phase change that
// internal/machine's table does not name: every seat test is also a check of
// the driver's state × event table.
func (h *Harness) checkTransitions() {
	for _, line := range strings.Split(h.DriverLog(), "\n") {
		if strings.Contains(line, seat.UnnamedTransition) {
			h.T.Errorf("seat %s: %s", h.Name, line)
		}
	}
}

// RunEnv runs the pantty binary with args, the given stdin, and extra
// environment variables on top of Env (for example PANTTY_SEAT, to run a
// command as if from inside a seat). It is safe to call from any goroutine: it
// reports a failure to start in Result.Err instead of failing the test.
func (h *Harness) RunEnv(extra map[string]string, stdin string, args ...string) Result {
	env := h.Env()
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return h.exec(env, stdin, args)
}

// Job is one pantty invocation for RunConcurrently.
type Job struct {
	Stdin string
	Args  []string
}

// RunConcurrently starts every job as its own pantty process at (nearly) the
// same moment — each waits on a shared barrier after its goroutine is up — and
// returns their results in job order. It is the way to provoke races between
// senders (one id sent by many processes, many senders into one inbox).
func (h *Harness) RunConcurrently(jobs []Job) []Result {
	h.T.Helper()
	res := make([]Result, len(jobs))
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for i, j := range jobs {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			res[i] = h.RunEnv(nil, j.Stdin, j.Args...)
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
	for i, r := range res {
		if r.Err != nil {
			h.T.Fatalf("job %d (pantty %v): %v", i, jobs[i].Args, r.Err)
		}
	}
	return res
}

// PasteRaw is the failing control of a dispatch test, for test seats only: it
// types text into the seat's pane with tmux but WITHOUT the guard and without
// bracketed paste (each LF becomes Enter, as a terminal types it), then sends
// Enter. Whatever the harness would dispatch from this text, it dispatches.
// The driver is not asked: a test uses it on a seat it created, to prove that
// the corpus it sends through the board door is dangerous when sent raw.
func (h *Harness) PasteRaw(text string) {
	h.T.Helper()
	pane := h.Session().PaneID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Tmux().PasteRaw(ctx, pane, []byte(text)); err != nil {
		h.T.Fatalf("raw paste: %v", err)
	}
	if err := h.Tmux().SendKeys(ctx, pane, "Enter"); err != nil {
		h.T.Fatalf("raw paste Enter: %v", err)
	}
}

// Screen returns the visible text of the seat's pane.
func (h *Harness) Screen() string {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.Tmux().Capture(ctx, h.Session().PaneID)
	if err != nil {
		h.T.Fatalf("capture pane: %v", err)
	}
	return s
}

// Composer returns what the simulator's input box holds, read from the pane:
// the lines between the two horizontal rules, without the "> " prompt and the
// indentation of continuation lines. The simulator's dimmed placeholder
// ("Resend your message to try again") is not typed text; it is returned as
// is, so a caller can tell it apart. ok is false when the screen does not show
// an input box (the simulator is still starting, or it is not the simulator).
func Composer(screen string) (text string, ok bool) {
	box, ok := panetext.BetweenLastRules(screen, panetext.IsRule)
	if !ok {
		return "", false
	}
	return panetext.BoxText(box, ">"), true
}

// WaitState waits until message id is in state.
func (h *Harness) WaitState(id, state string, limit time.Duration) inbox.Status {
	h.T.Helper()
	s := h.Seat()
	var st inbox.Status
	h.WaitFor(fmt.Sprintf("message %s %s", id, state), limit, func() bool {
		var err error
		st, err = s.ReadStatus(id)
		return err == nil && st.State == state
	})
	return st
}

// Cursor reads cursor.toml.
func (h *Harness) Cursor() inbox.Cursor {
	h.T.Helper()
	c, err := h.Seat().CursorFile().Read()
	if err != nil {
		h.T.Fatalf("cursor.toml: %v", err)
	}
	return c
}

// InboxFiles returns every file under the seat's inbox (msgs and statuses) by
// path relative to inbox/, with its content: a refused send must leave it
// byte-for-byte the same.
func (h *Harness) InboxFiles() map[string]string {
	h.T.Helper()
	root := filepath.Dir(h.Seat().MsgsDir())
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		h.T.Fatalf("read inbox: %v", err)
	}
	return out
}

// Resubmit reports whether the request carried pantty's resubmission mark
// (resubmit=1 in the guard header).
func (r Request) Resubmit() bool {
	_, _, n, ok := guard.MatchHeader(r.NewInput)
	return ok && n == 1
}

// Bare makes a harness whose seat has no seat.toml yet: the same private state
// root, tmux socket, workdir and cleanup as New, for tests that write seat.toml
// by hand (WriteConfig) or that must show a refused command created nothing.
func Bare(t testing.TB, name string) *Harness {
	t.Helper()
	dir := tmuxtest.Dir(t)
	h := &Harness{T: t, Name: name, Home: filepath.Join(dir, "home"), Socket: filepath.Join(dir, "tmux"),
		Work: filepath.Join(dir, "work"), Bin: Binary(t)}
	if err := os.MkdirAll(h.Work, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.cleanup)
	return h
}

// WriteConfig writes text as the seat's seat.toml, verbatim (the seat's
// directory is created if needed).
func (h *Harness) WriteConfig(text string) {
	h.T.Helper()
	s := h.Seat()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
		h.T.Fatal(err)
	}
}

// ServerRunning reports whether a tmux server answers on the harness's socket.
func (h *Harness) ServerRunning() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := h.Tmux().ListPanes(ctx)
	return err == nil
}

// NewHarness makes a seat named name on the given harness (for example
// "claude-code"), not yet started, with only the options' environment and
// lines (New adds the simulator's knobs first). Cleanup stops it, kills its
// tmux server and any driver still recorded.
func NewHarness(t testing.TB, name, harness string, opts ...Option) *Harness {
	t.Helper()
	cfg := &options{env: map[string]string{}}
	for _, o := range opts {
		o(cfg)
	}
	dir := tmuxtest.Dir(t)
	h := &Harness{T: t, Name: name, Home: filepath.Join(dir, "home"), Socket: filepath.Join(dir, "tmux"),
		Work: filepath.Join(dir, "work"), Bin: Binary(t)}
	if err := os.MkdirAll(h.Work, 0o700); err != nil {
		t.Fatal(err)
	}
	s := h.Seat()
	if err := seat.InitConfig(s, harness, h.Work, cfg.env); err != nil {
		t.Fatal(err)
	}
	if len(cfg.extra) > 0 {
		data, _ := os.ReadFile(s.ConfigPath())
		text := strings.Replace(string(data), "[tmux]", strings.Join(cfg.extra, "\n")+"\n\n[tmux]", 1)
		if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(h.cleanup)
	return h
}

// CronPath is the PATH cron gives its jobs (Debian's cron; docs/recover.md).
const CronPath = "/usr/bin:/bin"

// RunBare runs the pantty binary the way a scheduler does: `env -i` with
// cron's PATH, the user's own HOME and name, and PANTTY_HOME — none of the
// variables of the shell that started the seat (no API key, no harness
// directory on PATH, no tmux socket override). A test that passes only in the
// starting shell's environment proves the lab, not the product.
func (h *Harness) RunBare(args ...string) Result {
	h.T.Helper()
	env := []string{"PATH=" + CronPath, "SHELL=/bin/sh", config.HomeEnv + "=" + h.Home}
	if u, err := user.Current(); err == nil {
		env = append(env, "HOME="+u.HomeDir, "LOGNAME="+u.Username, "USER="+u.Username)
	}
	return h.runWith(env, "", args)
}

// CheckPrivate asserts every directory under dir is 0700 and every file 0600.
func CheckPrivate(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		switch m := fi.Mode(); {
		case m.IsDir() && m.Perm() != fsatomic.DirMode:
			t.Errorf("directory %s has mode %v, want %v", p, m.Perm(), fsatomic.DirMode)
		case m.IsRegular() && m.Perm() != fsatomic.FileMode:
			t.Errorf("file %s has mode %v, want %v", p, m.Perm(), fsatomic.FileMode)
		}
		return nil
	})
}
