package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/scripts/bench/synth"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// simEnv is the simulator's fast setting for every real seat of the bench
// (the same as seattest.FastSim): the figures depend on it, so the table
// prints it.
var simEnv = map[string]string{
	"PANTTY_SIM_STARTUP": "50ms",
	"PANTTY_SIM_COMMIT":  "10ms",
	"PANTTY_SIM_TURN":    "20ms",
}

// bench is one run: its private directory, what it started, and the results.
type bench struct {
	root     string // /tmp/pb-<pid>: state roots, sockets, workdirs
	pantty   string
	compare  string // another pantty binary to run interleaved (before/after a fix); "" = none
	hello    string // a Go hello-world, the floor of a process start; "" = none
	long     bool
	realTmux string
	work     string

	sockets []string      // tmux servers this run created (killed at the end)
	started []startedSeat // real seats this run started (stopped at the end)
	sets    []*synth.Set
	stops   []func() // other things this run started (the fleet's sshd and ControlMasters), stopped at the end

	load   string // the load average when the run started
	rows   []row
	checks []check
	fails  []string

	// shared between sections
	dlv      *realSeat // the delivery seat (1 real seat; recover and status over it, idle)
	r10      []*realSeat
	synths   map[int]string // synthetic seat count -> state root
	sweepMed map[int]time.Duration
}

type startedSeat struct {
	home, name string
}

func newBench(pantty string, long bool) (*bench, error) {
	real, err := exec.LookPath("tmux")
	if err != nil {
		return nil, fmt.Errorf("tmux not found in PATH: %v", err)
	}
	real, _ = filepath.EvalSymlinks(real)
	root := filepath.Join("/tmp", fmt.Sprintf("pb-%d", os.Getpid()))
	os.RemoveAll(root)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	b := &bench{load: loadAvg(), root: root, pantty: pantty, long: long, realTmux: real, work: filepath.Join(root, "work"), synths: map[int]string{}}
	if err := os.MkdirAll(b.work, 0o700); err != nil {
		return nil, err
	}
	b.logf("bench: root %s, pantty %s, %s form, GOMAXPROCS %d", root, pantty, map[bool]string{false: "quick", true: "long"}[long], runtime.GOMAXPROCS(0))
	return b, nil
}

func (b *bench) logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", a...)
}

func (b *bench) fail(section string, err error) {
	b.fails = append(b.fails, section+": "+err.Error())
}

// pick returns the quick or the long value.
func (b *bench) pick(quick, long int) int {
	if b.long {
		return long
	}
	return quick
}

// home makes a fresh state root with its own tmux socket.
func (b *bench) home(name string) (home, socket string) {
	home = filepath.Join(b.root, name)
	os.MkdirAll(home, 0o700)
	socket = filepath.Join(b.root, name+".S")
	b.sockets = append(b.sockets, socket)
	return home, socket
}

// env is the environment of every pantty process: the caller's, without tmux
// nesting markers and without other PANTTY_ settings, plus the state root and
// socket. extra entries go last (PATH for the counting wrapper).
func (b *bench) env(home, socket string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "PANTTY_") {
			continue
		}
		if k == "PATH" && len(extra) > 0 && strings.HasPrefix(extra[0], "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, config.HomeEnv+"="+home)
	if socket != "" {
		env = append(env, "PANTTY_TMUX_SOCKET="+socket)
	}
	return append(env, extra...)
}

// result is one finished pantty process.
type result struct {
	Code     int
	Stdout   string
	Stderr   string
	Wall     time.Duration // fork to reaped
	MaxRSSKB int64         // peak resident set (getrusage ru_maxrss)
	CPU      time.Duration // user + system
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.Code, trim(r.Stdout), trim(r.Stderr))
}

func trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// runIn runs the pantty binary with env, stdin and args, timing it from start
// to reaped.
func (b *bench) runIn(env []string, stdin string, args ...string) result {
	return b.runBin(b.pantty, env, stdin, args...)
}

// runBin is runIn with another pantty binary (the -compare one).
func (b *bench) runBin(bin string, env []string, stdin string, args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{Wall: time.Since(start), Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Code, r.Stderr = -1, err.Error()
	}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSSKB = ru.Maxrss
		}
		r.CPU = ps.UserTime() + ps.SystemTime()
	}
	return r
}

// realSeat is a seat with a real driver and the simulator in real tmux.
type realSeat struct {
	home, socket, name string
	s                  state.Seat
}

// newRealSeat writes seat.toml for a simulated seat with the fast timings.
func (b *bench) newRealSeat(home, socket, name string) (*realSeat, error) {
	s, err := state.Open(home, name)
	if err != nil {
		return nil, err
	}
	work := filepath.Join(b.work, filepath.Base(home)+"-"+name)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return nil, err
	}
	if err := seat.InitConfig(s, "sim", work, simEnv); err != nil {
		return nil, err
	}
	return &realSeat{home: home, socket: socket, name: name, s: s}, nil
}

// start runs `pantty seat start`; the driver and the harness are stopped at
// the end of the run.
func (b *bench) start(rs *realSeat) error {
	b.started = append(b.started, startedSeat{rs.home, rs.name})
	r := b.runIn(b.env(rs.home, rs.socket), "", "seat", "start", rs.name)
	if r.Code != 0 {
		log, _ := os.ReadFile(rs.s.DriverLogPath())
		return fmt.Errorf("seat start %s: %s\ndriver.log:\n%s", rs.name, r, log)
	}
	return nil
}

// driverPID is the live driver's pid (owner.toml, checked against its start time).
func (rs *realSeat) driverPID() (int, error) {
	o, live, err := rs.s.LiveOwner()
	if err != nil {
		return 0, err
	}
	if !live {
		return 0, fmt.Errorf("seat %s: no live driver", rs.name)
	}
	return o.PID, nil
}

// cleanup stops every seat this run started, closes the synthetic sets, runs
// the other stops (the fleet's ControlMasters and sshd) and kills the tmux
// servers it created (each by its own socket).
func (b *bench) cleanup(keep bool) {
	for _, st := range b.started {
		s, err := state.Open(st.home, st.name)
		if err != nil {
			continue
		}
		if o, live, _ := s.LiveOwner(); live {
			b.runIn(b.env(st.home, ""), "", "seat", "stop", st.name)
			if o.Live() {
				syscall.Kill(o.PID, syscall.SIGKILL)
			}
		}
		if sess, err := s.SessionFile().Read(); err == nil && sess.PanePID > 0 {
			proc.KillGroup(sess.PanePID)
		}
	}
	b.started = nil
	for _, set := range b.sets {
		set.Close()
	}
	b.sets = nil
	for _, stop := range b.stops {
		stop()
	}
	b.stops = nil
	for _, sock := range b.sockets {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tmux.New(sock).KillServer(ctx)
		cancel()
	}
	b.sockets = nil
	if !keep {
		os.RemoveAll(b.root)
	} else {
		b.logf("kept %s", b.root)
	}
}
