package appserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Spec is how to run one seat's app server.
type Spec struct {
	Bin    string   // the codex binary
	Home   string   // CODEX_HOME: the seat's own (codex.Home)
	Socket string   // where it listens; Codex makes this path a symlink to its socket
	Dir    string   // its working directory (the seat's workdir)
	Env    []string // its environment; CODEX_HOME is set from Home
	Args   []string // more arguments (-c key=value overrides)
	Stderr io.Writer
	// Via, when set, is the command that runs the server as its child and
	// stays its parent: pantty's pane process (`pantty __exec RECORD`,
	// whose record holds Argv, ServerEnv and Dir; it runs with the caller's
	// own environment, which must not mark it as inside a seat). It
	// is a child subreaper, so what the server starts in a session of its own
	// (Codex's sandbox helpers: bwrap --new-session) stays below it and is
	// killed when the server exits. Without it the server is started
	// directly and such a helper can outlive it (measured: a bwrap of an
	// fs helper left running after Stop, in one loaded run of the suite).
	Via []string
}

// Argv is the server's own command line: `BIN app-server --listen
// unix://SOCKET` and Args.
func (spec Spec) Argv() []string {
	return append([]string{spec.Bin, "app-server", "--listen", "unix://" + spec.Socket}, spec.Args...)
}

// ServerEnv is the server's environment: Env with CODEX_HOME set from Home.
func (spec Spec) ServerEnv() []string {
	return append(append([]string{}, spec.Env...), "CODEX_HOME="+spec.Home)
}

// Server is a running app server that pantty started: one process, its
// socket, its end. Its death is seen (Done) like a harness exit, never
// polled for.
type Server struct {
	spec Spec
	cmd  *exec.Cmd

	done chan struct{} // closed when the process exited
	mu   sync.Mutex
	err  error // how it exited
}

// ErrListening is a Start refused because a live server already answers at
// the socket: two servers must not own one seat's threads.
var ErrListening = errors.New("appserver: a server already listens at the socket")

// Start runs `codex app-server --listen unix://SOCKET` and returns once the
// socket takes a WebSocket (the handshake answered), the process has exited
// (its error), or ctx ended. A symlink left at the socket's path by a server
// that was killed (nothing answers there) is removed first; a live one
// refuses the start (ErrListening). The process is in its own process group,
// so Stop ends what it started too.
func Start(ctx context.Context, spec Spec) (*Server, error) {
	if spec.Socket == "" || !filepath.IsAbs(spec.Socket) {
		return nil, fmt.Errorf("appserver: socket path %q is not absolute", spec.Socket)
	}
	if err := clearStale(ctx, spec.Socket); err != nil {
		return nil, err
	}
	dir := filepath.Dir(spec.Socket)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return nil, fmt.Errorf("appserver: watch %s: %w", dir, err)
	}
	cmd := exec.Command(spec.Bin, spec.Argv()[1:]...)
	cmd.Env = spec.ServerEnv()
	if len(spec.Via) > 0 {
		// The parent runs with this process's environment, as tmux gives a
		// pane's: the server's (the seat's markers among it) is its record's.
		cmd = exec.Command(spec.Via[0], spec.Via[1:]...)
	}
	cmd.Dir = spec.Dir
	cmd.Stderr = spec.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("appserver: start %s: %w", cmd.Args[0], err)
	}
	s := &Server{spec: spec, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.done)
	}()
	if err := s.awaitSocket(ctx, w); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// awaitSocket waits for the socket's path to appear and take a handshake.
// The path's creation is the event; a dial right after it that is refused
// (the symlink made before the listener) is tried again on the next event in
// the directory or after retryDial.
func (s *Server) awaitSocket(ctx context.Context, w *fsnotify.Watcher) error {
	name := filepath.Base(s.spec.Socket)
	try := func() bool {
		if _, err := os.Lstat(s.spec.Socket); err != nil {
			return false
		}
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		ws, err := dialWS(dctx, s.spec.Socket)
		if err != nil {
			return false
		}
		ws.Close()
		return true
	}
	var retry <-chan time.Time
	for {
		if try() {
			return nil
		}
		if _, err := os.Lstat(s.spec.Socket); err == nil {
			retry = time.After(retryDial)
		}
		select {
		case ev := <-w.Events:
			if filepath.Base(ev.Name) != name {
				continue
			}
		case <-retry:
		case err := <-w.Errors:
			return fmt.Errorf("appserver: watch: %w", err)
		case <-s.done:
			return fmt.Errorf("appserver: the server exited before it listened: %v", s.Err())
		case <-ctx.Done():
			return fmt.Errorf("appserver: the server did not listen at %s: %w", s.spec.Socket, ctx.Err())
		}
	}
}

// retryDial is the pause before dialling a socket path again that exists but
// refused: no event says when a listener behind it starts.
const retryDial = 20 * time.Millisecond

// clearStale removes what a killed server left at path: a symlink or a
// socket that no server answers on. Anything else there (a file, a
// directory) is not pantty's to remove; a live server is ErrListening.
func clearStale(ctx context.Context, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeSocket) == 0 {
		return fmt.Errorf("appserver: %s exists and is not a socket", path)
	}
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if ws, err := dialWS(dctx, path); err == nil {
		ws.Close()
		return fmt.Errorf("%w: %s", ErrListening, path)
	}
	return os.Remove(path)
}

// Dial opens a connection to the server and initializes it as client name.
func (s *Server) Dial(ctx context.Context, name, version string) (*Conn, error) {
	c, err := Dial(ctx, s.spec.Socket)
	if err != nil {
		return nil, err
	}
	if err := c.Initialize(ctx, name, version); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Socket is the path the server listens at.
func (s *Server) Socket() string { return s.spec.Socket }

// Argv is the server's own command line (Spec.Argv), whether or not it
// runs under Via.
func (s *Server) Argv() []string { return s.spec.Argv() }

// Pid is the server's process id, or with Via that of its parent, which
// lives exactly as long as the server.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Done is closed when the server's process exited (Err: how).
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is how the server exited (nil while it runs, or for exit status 0).
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// StopGrace is how long Stop waits after SIGTERM before SIGKILL: on SIGTERM
// Codex 0.171.0 removes its socket and the symlink (measured), so a
// server that obeys leaves nothing for the next start to clear.
const StopGrace = 2 * time.Second

// Stop ends the server: SIGTERM, then SIGKILL to its process group after
// StopGrace. It returns once the process has exited. Under Via the SIGTERM
// goes to the parent alone, which passes it to the server (one SIGTERM, not
// two) and ends what else runs below it; the parent gives the server its
// own grace (proc.LaunchGrace, 1 s) before SIGKILL, within StopGrace.
func (s *Server) Stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	pg := -s.cmd.Process.Pid
	if len(s.spec.Via) > 0 {
		syscall.Kill(s.cmd.Process.Pid, syscall.SIGTERM)
	} else {
		syscall.Kill(pg, syscall.SIGTERM)
	}
	select {
	case <-s.done:
	case <-time.After(StopGrace):
		syscall.Kill(pg, syscall.SIGKILL)
		<-s.done
	}
	syscall.Kill(pg, syscall.SIGKILL) // what it started and left behind
	return nil
}
