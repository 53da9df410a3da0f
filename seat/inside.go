package seat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// InsideSeat reports whether this process runs inside a seat's own process tree:
// the harness's environment marker, or an ancestor that is a seat's pane process.
// Steering commands refuse such callers: the seat's model has a shell tool, and
// a board message must not be able to make it steer a seat (DESIGN.md §9).
func InsideSeat(home string) (string, bool) {
	if name := os.Getenv(SeatEnv); name != "" {
		return name, true
	}
	panes := map[int]string{}
	names, _ := List(home)
	for _, n := range names {
		s, err := Open(home, n)
		if err != nil {
			continue
		}
		if sess, err := s.ReadSession(); err == nil && sess.PanePID > 1 {
			panes[sess.PanePID] = n
		}
	}
	if len(panes) == 0 {
		return "", false
	}
	for pid := os.Getppid(); pid > 1; {
		if n, ok := panes[pid]; ok {
			return n, true
		}
		next, err := parentPID(pid)
		if err != nil || next == pid {
			break
		}
		pid = next
	}
	return "", false
}

// RefuseInside returns ErrInsideSeat for a steering command run inside a seat.
func RefuseInside(home, what string) error {
	if n, ok := InsideSeat(home); ok {
		return fmt.Errorf("%w: %s is not allowed from inside seat %q (its process tree); run it from outside", ErrInsideSeat, what, n)
	}
	return nil
}

func parentPID(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("malformed stat")
	}
	return strconv.Atoi(f[1])
}
