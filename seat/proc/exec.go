package proc

import (
	"fmt"
	"os"
	"syscall"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/state"
)

// PaneArgv is the command line of a seat's pane process. Inside recognises the
// pane among a caller's ancestors by it (parsePaneArgv), so the driver builds
// it here and nowhere else.
func PaneArgv(pantty string, s state.Seat) []string {
	return PaneArgvAt(pantty, s.LaunchPath())
}

// PaneArgvAt is PaneArgv for a launch record other than the pane's: a seat's
// app server runs under `pantty __exec <seat>/server-launch.toml`, a pane
// process in all but the pane (state.Seat.ServerLaunchFile).
func PaneArgvAt(pantty, record string) []string {
	return []string{pantty, "__exec", record}
}

// paneDescendants lists every descendant of pid when pid is pantty's pane
// process (its command line is `pantty __exec …/launch.toml`), nothing
// otherwise: a recorded pane pid may have been recycled by now, and a stranger's
// tree must never be killed.
func paneDescendants(pid int) []int {
	if _, ok := execAncestor(pid); !ok {
		return nil
	}
	return Descendants(pid)
}

// Descendants lists every live descendant of pid (children first), from one
// pass over /proc. The pane process uses it on itself to signal its whole
// tree; a caller that did not start pid checks whose it is first
// (paneDescendants).
func Descendants(pid int) []int {
	kids := procChildren()
	var out []int
	for queue := kids[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, kids[queue[0]]...)
	}
	return out
}

// ChildrenOf lists the live children of pid.
func ChildrenOf(pid int) []int { return procChildren()[pid] }

// procChildren maps each process to its children, from one pass over /proc
// (each process's parent is field 4 of its stat file).
func procChildren() map[int][]int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var p int
		if _, err := fmt.Sscanf(e.Name(), "%d", &p); err != nil || p <= 0 {
			continue
		}
		if ppid, err := parentPID(p); err == nil {
			kids[ppid] = append(kids[ppid], p)
		}
	}
	return kids
}

// HarnessPID returns the harness process under a pane started by paneexec.Run: the
// pane process's oldest child (orphans it adopts are the harness's descendants,
// so they started later). For a pane whose first process is the harness itself
// (launched before pantty kept the pane process as a parent) it returns panePID.
// Tools that signal or measure the harness itself (the soak's SIGSTOP, the idle
// benchmark's CPU ticks) use it; SIGKILL to the pane pid needs no lookup.
func HarnessPID(panePID int) (int, error) {
	if _, isExec := execAncestor(panePID); !isExec {
		if _, err := procid.Start(panePID); err != nil {
			return 0, err
		}
		return panePID, nil
	}
	best, bestStart := 0, uint64(0)
	for _, k := range ChildrenOf(panePID) {
		st, err := procid.Start(k)
		if err != nil {
			continue
		}
		if best == 0 || st < bestStart || (st == bestStart && k < best) {
			best, bestStart = k, st
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("pane pid %d: no live child", panePID)
	}
	return best, nil
}

// KillGroup sends SIGKILL to the process group a pane's first process leads
// (tmux starts each pane in its own session), ending helpers the harness spawned,
// and to every descendant of pantty's pane process (paneDescendants): a child the
// harness detached with setsid is in another group, and would otherwise outlive
// the pane, reparented to pid 1. It acts only while pid is still a pane
// process (`pantty __exec …`): a recorded pane pid may have been recycled, and
// a stranger's group must never be killed. Stop, recover and the driver end a
// seat's launch with Seat.EndLaunch, which also finds what escaped the group
// and the tree; KillGroup stays for tools that hold only a pane pid.
func KillGroup(pid int) {
	if pid <= 1 {
		return
	}
	if _, ok := execAncestor(pid); !ok {
		return
	}
	rest := paneDescendants(pid) // listed first: once pid dies they are reparented away
	syscall.Kill(-pid, syscall.SIGKILL)
	for _, d := range rest {
		syscall.Kill(d, syscall.SIGKILL)
	}
}
