package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// world is the soak's private universe: one state root, the pantty binary, and
// the seats, each on its own tmux socket. Everything lives under root, so a
// process or server left behind is found by its paths.
type world struct {
	root, home, bin string
	seats           []*seatRig
	env             []string
	log             *logger
	mounts          []string // what the soak mounted (storage.go), unmounted at teardown
}

// seatRig is one seat under soak and what the soak knows about it.
type seatRig struct {
	name, work, socket string
	session            string // the harness session id of the first start: it must never change

	mu   sync.Mutex
	busy bool // a fault is in progress on this seat
}

func (r *seatRig) tryLock() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy {
		return false
	}
	r.busy = true
	return true
}

func (r *seatRig) unlock() {
	r.mu.Lock()
	r.busy = false
	r.mu.Unlock()
}

func (w *world) seat(r *seatRig) state.Seat {
	s, _ := state.Open(w.home, r.name)
	return s
}

// result is one finished pantty process.
type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("exit %d: %s%s", r.code, strings.TrimSpace(r.stdout), oneLine(r.stderr))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return " | " + strings.ReplaceAll(s, "\n", " / ")
}

// pantty runs the pantty binary as a real process, with the soak's home.
func (w *world) pantty(timeout time.Duration, stdin string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.bin, args...)
	cmd.Env = w.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code, r.stderr = -1, err.Error()
	}
	if ctx.Err() != nil {
		r.stderr += " (timed out after " + timeout.String() + ")"
	}
	return r
}

// setup creates the seats (seat init through the CLI, then the soak's knobs in
// seat.toml: fast heartbeats so recovery is quick, a private socket each).
func (w *world) setup(n int, simEnv map[string]string) error {
	w.home = filepath.Join(w.root, "home")
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "PANTTY_") || strings.HasPrefix(k, "CLAUDE") {
			continue
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, config.HomeEnv+"="+w.home)
	storage := w.mountStateRoot()
	if storage {
		faultKinds = append(faultKinds, fStateFull)
	}
	for i := 1; i <= n; i++ {
		r := &seatRig{name: fmt.Sprintf("s%d", i), work: filepath.Join(w.root, fmt.Sprintf("w%d", i)),
			socket: filepath.Join(w.root, fmt.Sprintf("t%d", i))}
		if err := os.MkdirAll(r.work, 0o700); err != nil {
			return err
		}
		args := []string{"seat", "init", r.name, "--harness", "sim", "--workdir", r.work}
		for k, v := range simEnv {
			args = append(args, "--env", k+"="+v)
		}
		if res := w.pantty(30*time.Second, "", args...); res.code != 0 {
			return fmt.Errorf("seat init %s: %s", r.name, res)
		}
		s := w.seat(r)
		data, err := os.ReadFile(s.ConfigPath())
		if err != nil {
			return err
		}
		knobs := strings.Join([]string{
			`heartbeat_interval = "1s"`,
			`turn_ceiling = "30s"`,
			`submit_timeout = "2s"`,
			`ready_timeout = "20s"`,
			``,
			`[tmux]`,
			`socket = ` + strconv.Quote(r.socket),
		}, "\n")
		text := strings.Replace(string(data), "[tmux]", knobs, 1)
		if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
			return err
		}
		if storage {
			if err := w.keepHarnessDir(r); err != nil {
				return err
			}
		}
		w.seats = append(w.seats, r)
	}
	return nil
}

// tmux is a client on a seat's private server.
func (r *seatRig) tmux() *tmux.Client { return tmux.New(r.socket) }

// serverPID is the pid of a seat's tmux server, 0 when none answers.
func (r *seatRig) serverPID() int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	pid, err := r.tmux().ServerPID(ctx)
	if err != nil {
		return 0
	}
	return pid
}

// liveProc is a live process found under /proc.
type liveProc struct {
	pid  int
	argv []string
}

// processes lists live processes whose command line or environment names
// needle (the soak's root): drivers, harnesses, hooks, tmux servers.
func processes(needle string) []liveProc {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []liveProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmd) == 0 {
			continue // a kernel thread or a zombie
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if !bytes.Contains(cmd, []byte(needle)) && !bytes.Contains(env, []byte(needle)) {
			continue
		}
		if _, err := procid.Start(pid); err != nil {
			continue
		}
		out = append(out, liveProc{pid: pid, argv: strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")})
	}
	return out
}

// hookProc is a `pantty hook` process caught running.
type hookProc struct {
	pid   int
	start uint64
	argv  []string
}

// catchHook watches /proc for a new `pantty hook --seat name` process and
// returns it while it runs. Only pids not seen before are read (a shell that
// is about to exec the hook is read again), so a loop takes well under a
// millisecond and a hook living a few milliseconds is seen.
func (w *world) catchHook(name string, limit time.Duration) (hookProc, bool) {
	known := map[string]bool{}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		d, err := os.Open("/proc")
		if err != nil {
			return hookProc{}, false
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, n := range names {
			if known[n] || n[0] < '0' || n[0] > '9' {
				continue
			}
			cmd, err := os.ReadFile("/proc/" + n + "/cmdline")
			if err != nil {
				continue
			}
			argv := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
			if argv[0] == w.bin && strings.Contains(string(cmd), "\x00hook\x00") && strings.Contains(string(cmd), "\x00--seat\x00"+name+"\x00") {
				pid, _ := strconv.Atoi(n)
				if start, err := procid.Start(pid); err == nil {
					return hookProc{pid: pid, start: start, argv: argv}, true
				}
			}
			if !strings.Contains(string(cmd), "hook") {
				known[n] = true // not a hook now, and not about to exec one
			}
		}
	}
	return hookProc{}, false
}

// signalIdentified signals pid only if it is still the process that started at
// start (a pid can be reused).
func signalIdentified(pid int, start uint64, sig syscall.Signal) bool {
	if pid <= 0 || !procid.Alive(pid, start) {
		return false
	}
	return syscall.Kill(pid, sig) == nil
}

// revived reports whether a seat is back: a live driver whose loop beat after
// since, its harness on the original session in a live pane that tmux shows,
// and the driver past start-up. It says what is missing when not.
func (w *world) revived(r *seatRig, since time.Time) (bool, string) {
	s := w.seat(r)
	o, live, err := s.LiveOwner()
	if err != nil || !live {
		return false, fmt.Sprintf("no live driver (%v)", err)
	}
	hb, err := s.HeartbeatFile().Read()
	switch {
	case err != nil:
		return false, "heartbeat: " + err.Error()
	case hb.PID != o.PID:
		return false, "heartbeat from another pid"
	case !hb.At.After(since):
		return false, "no heartbeat since the fault"
	case hb.Stale(time.Now()):
		return false, "heartbeat stale"
	}
	switch hb.Phase {
	case "starting", "relaunching", "stopping", "":
		return false, "phase " + hb.Phase
	}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return false, "session: " + err.Error()
	}
	if sess.ID != r.session {
		return false, fmt.Sprintf("session %s, not the original %s", sess.ID, r.session)
	}
	if _, err := procid.Start(sess.PanePID); err != nil {
		return false, "pane pid not running"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	panes, err := r.tmux().ListPanes(ctx)
	if err != nil {
		return false, "tmux: " + err.Error()
	}
	for _, p := range panes {
		if p.ID == sess.PaneID && p.PID == sess.PanePID && !p.Dead {
			return true, ""
		}
	}
	return false, "the pane of session.toml is not live in tmux"
}

// waitRevived polls revived until it holds or limit passes; it returns how long
// the revival took from since.
func (w *world) waitRevived(r *seatRig, since time.Time, limit time.Duration) (time.Duration, bool, string) {
	deadline := time.Now().Add(limit)
	why := ""
	for time.Now().Before(deadline) {
		ok, w2 := w.revived(r, since)
		if ok {
			return time.Since(since), true, ""
		}
		why = w2
		time.Sleep(50 * time.Millisecond)
	}
	return limit, false, why
}
