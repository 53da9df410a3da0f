package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
	"golang.org/x/sys/unix"
)

// LaunchGrace is how long the processes of a seat's launch get between
// SIGTERM and SIGKILL when pantty ends them: the pane process after its
// terminal hung up (paneexec), and the driver before it relaunches on the same
// session or after a stop. A harness that obeys SIGTERM or SIGHUP (Claude Code,
// the simulator, Gemini CLI's inner node) is gone in milliseconds; one that
// ignores both (Gemini CLI 0.61.0's outer node, measured: docs/real-seats.md)
// is killed after this, instead of running on beside its relaunch.
const LaunchGrace = time.Second

// endRounds bounds the SIGKILL rounds of EndLaunch: each round kills what the
// last one left (a child forked between a listing and its kill is reparented
// to the pane process, a child subreaper, and listed by the next round).
const endRounds = 5

// endWait bounds the wait for killed processes to die in one round; SIGKILL is
// not refusable, so only an unkillable process (uninterruptible I/O) uses it up.
const endWait = time.Second

// ErrSurvivors: a process of the seat's launch is still running after pantty
// ended the launch (the error names the pids).
var ErrSurvivors = errors.New("processes of the seat's launch are still running")

// LaunchProc is one live process of a seat's launches.
type LaunchProc struct {
	PID  int
	Cmd  string // its command line, shortened, for a report
	Pane bool   // a pane process (`pantty __exec …/launch.toml`) of the seat
}

// String names the process for a report: "pid 123 (node …/gemini)".
func (p LaunchProc) String() string { return fmt.Sprintf("pid %d (%s)", p.PID, p.Cmd) }

// Pids lists the processes' pids, space-separated: pasteable after `kill -9`.
func Pids(ps []LaunchProc) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(p.PID)
	}
	return strings.Join(out, " ")
}

// SurvivorsError is the error for processes of the seat's launch left
// running: each is named, with the command that ends them.
func SurvivorsError(s state.Seat, ps []LaunchProc) error {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.String()
	}
	return fmt.Errorf("%w: seat %s: %s; end them with: kill -9 %s", ErrSurvivors, s.Name, strings.Join(names, ", "), Pids(ps))
}

// LaunchProcs lists every live process of the seat's launches, whichever
// launch started it: every pane process of the seat (its command line is
// PaneArgv, whatever tmux server it ran in, also one reparented to pid 1 when
// its server died), every descendant of one (the pane process is a child
// subreaper, so setsid and double forks stay below it while it lives), and
// every process that carries the seat's markers (SeatEnv and SeatHomeEnv, set
// for the harness and inherited): what escaped the tree when a pane process was
// killed first. A process that both detached and dropped the markers is not
// found (docs/real-seats.md). Zombies, this process and its ancestors are left out.
func LaunchProcs(s state.Seat) []LaunchProc {
	return launchProcs(s, scanProcs())
}

// LaunchProcsOutside is LaunchProcs without the given pane process and its
// descendants: what runs of the seat's earlier launches beside its current one.
func LaunchProcsOutside(s state.Seat, panePID int) []LaunchProc {
	all := scanProcs()
	keep := map[int]bool{}
	if where, ok := execAncestor(panePID); ok && where.Name == s.Name && sameDir(where.Home, s.Home) {
		keep[panePID] = true
		for _, d := range descendantsIn(all, panePID) {
			keep[d] = true
		}
	}
	var out []LaunchProc
	for _, p := range launchProcs(s, all) {
		if !keep[p.PID] {
			out = append(out, p)
		}
	}
	return out
}

// procInfo is what one pass over /proc keeps of a process.
type procInfo struct {
	ppid int
	argv []string
}

// scanProcs reads every live (not zombie) process's parent and command line.
func scanProcs() map[int]procInfo {
	out := map[int]procInfo{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := procid.Start(pid); err != nil { // gone, or a zombie
			continue
		}
		ppid, err := parentPID(pid)
		if err != nil {
			continue
		}
		out[pid] = procInfo{ppid: ppid, argv: cmdline(pid)}
	}
	return out
}

// descendantsIn lists pid's descendants in a scan.
func descendantsIn(all map[int]procInfo, pid int) []int {
	kids := map[int][]int{}
	for p, in := range all {
		kids[in.ppid] = append(kids[in.ppid], p)
	}
	var out []int
	for queue := kids[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, kids[queue[0]]...)
	}
	return out
}

func launchProcs(s state.Seat, all map[int]procInfo) []LaunchProc {
	self := map[int]bool{}
	for p := os.Getpid(); p > 1; {
		self[p] = true
		in, ok := all[p]
		if !ok {
			break
		}
		p = in.ppid
	}
	found := map[int]bool{}
	panes := map[int]bool{}
	for pid, in := range all {
		if where, ok := parsePaneArgv(in.argv); ok && where.Name == s.Name && sameDir(where.Home, s.Home) {
			panes[pid], found[pid] = true, true
			for _, d := range descendantsIn(all, pid) {
				found[d] = true
			}
		}
	}
	for pid := range all {
		if !found[pid] && !self[pid] && marks(s, pid) {
			found[pid] = true
		}
	}
	var out []LaunchProc
	for pid := range found {
		if self[pid] {
			continue
		}
		out = append(out, LaunchProc{PID: pid, Cmd: shortCmd(all[pid].argv), Pane: panes[pid]})
	}
	slices.SortFunc(out, func(a, b LaunchProc) int { return a.PID - b.PID })
	return out
}

// marks reports whether a process's environment carries the seat's markers
// (SeatEnv naming it, SeatHomeEnv naming its home, however spelled); another
// user's process is unreadable: not ours.
func marks(s state.Seat, pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	var name, home string
	for _, kv := range bytes.Split(data, []byte{0}) {
		if k, v, ok := bytes.Cut(kv, []byte("=")); ok {
			switch string(k) {
			case launch.SeatEnv:
				name = string(v)
			case launch.SeatHomeEnv:
				home = string(v)
			}
		}
	}
	return name == s.Name && home != "" && sameDir(home, s.Home)
}

// sameDir reports whether two paths name one directory: the same string, or
// the same file once resolved (cron and a terminal may spell $PANTTY_HOME
// differently, through a symlink).
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// shortCmd is a command line for a report: the program's base name and its
// first arguments, bounded.
func shortCmd(argv []string) string {
	if len(argv) == 0 {
		return "?"
	}
	parts := append([]string{filepath.Base(argv[0])}, argv[1:min(len(argv), 4)]...)
	out := strings.Join(parts, " ")
	if len(argv) > 4 {
		out += " …"
	}
	if len(out) > 80 {
		out = out[:77] + "…"
	}
	return out
}

// EndLaunch ends every process of the seat's launches (LaunchProcs): with
// grace > 0 they first get SIGTERM and up to grace to exit; then every round
// stops (SIGSTOP: no more forks) and kills (SIGKILL) what is left — the
// descendants before the pane processes, so the pane process, a child
// subreaper, still adopts and reaps what a killed process leaves — until none
// is left or endRounds have passed. It returns what it signalled and, when some
// are still running, ErrSurvivors naming them. It waits on pidfds, never sleeps.
func EndLaunch(s state.Seat, grace time.Duration) ([]LaunchProc, error) {
	return end(s, func() []LaunchProc { return LaunchProcs(s) }, grace)
}

// EndOutside is EndLaunch for every process of the seat except the given
// pane process and its descendants (LaunchProcsOutside): a driver that adopts
// a live pane ends what runs of the seat's earlier launches beside it.
func EndOutside(s state.Seat, panePID int, grace time.Duration) ([]LaunchProc, error) {
	return end(s, func() []LaunchProc { return LaunchProcsOutside(s, panePID) }, grace)
}

func end(s state.Seat, list func() []LaunchProc, grace time.Duration) ([]LaunchProc, error) {
	var ended []LaunchProc
	note := func(ps []LaunchProc) {
		for _, p := range ps {
			if !slices.ContainsFunc(ended, func(e LaunchProc) bool { return e.PID == p.PID }) {
				ended = append(ended, p)
			}
		}
	}
	if grace > 0 {
		procs := list()
		if len(procs) == 0 {
			return nil, nil
		}
		note(procs)
		waitGone(signalAll(procs, unix.SIGTERM), grace)
	}
	for round := 0; round < endRounds; round++ {
		procs := list()
		if len(procs) == 0 {
			return ended, nil
		}
		var below []LaunchProc
		for _, p := range procs {
			if !p.Pane {
				below = append(below, p)
			}
		}
		if len(below) > 0 {
			procs = below
			closeAll(signalAll(procs, unix.SIGSTOP))
		}
		note(procs)
		waitGone(signalAll(procs, unix.SIGKILL), endWait)
	}
	if left := list(); len(left) > 0 {
		return ended, SurvivorsError(s, left)
	}
	return ended, nil
}

// signalAll sends sig to each process through a pidfd opened first (so a pid
// recycled since the listing is never signalled) and returns the open pidfds.
func signalAll(ps []LaunchProc, sig unix.Signal) []int {
	var fds []int
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.PID, 0)
		if err != nil {
			if errors.Is(err, unix.ENOSYS) {
				syscall.Kill(p.PID, sig) // no pidfds (Linux < 5.3): by pid
			}
			continue
		}
		if unix.PidfdSendSignal(fd, sig, nil, 0) != nil {
			unix.Close(fd)
			continue
		}
		fds = append(fds, fd)
	}
	return fds
}

// waitGone waits until every pidfd reads exited (a pidfd polls readable when
// its process has ended) or limit has passed, and closes them.
func waitGone(fds []int, limit time.Duration) {
	defer closeAll(fds)
	deadline := time.Now().Add(limit)
	for _, fd := range fds {
		for {
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(pfd, int(left.Milliseconds())+1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n > 0 {
				break
			}
		}
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// SignalProcs sends sig to each process (through pidfds, as EndLaunch does)
// without waiting: the driver's first, polite step when a launch went away.
func SignalProcs(ps []LaunchProc, sig syscall.Signal) {
	closeAll(signalAll(ps, unix.Signal(sig)))
}
