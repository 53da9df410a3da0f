package seat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Where names the seat a process runs inside, and how that was found.
type Where struct {
	Home, Name string
	// By is "ancestry" (an ancestor is a seat's pane process: the kernel's
	// record, which a child cannot change) or "environment" (only the
	// PANTTY_SEAT marker, which a process can drop or forge).
	By string
}

// Inside reports whether this process runs inside a seat's process tree, and
// which seat. Ancestry comes first and wins over the environment: the pane's
// first process (`pantty __exec`, a child subreaper, see ExecHarness) is an
// ancestor of everything the harness starts, setsid and double-forked children
// included, and its command line names the seat's launch record, so no seat
// marker is needed and a forged PANTTY_SEAT cannot pose as another seat. The
// pane pids recorded in home's session files are matched too (a pane launched
// before the pane process stayed as the harness's parent). The environment
// marker alone still counts as inside (refusing is the safe side).
func Inside(home string) (Where, bool) {
	var chain []int
	for pid := os.Getppid(); pid > 1; {
		if w, ok := execAncestor(pid); ok {
			return w, true
		}
		chain = append(chain, pid)
		next, err := parentPID(pid)
		if err != nil || next == pid {
			break
		}
		pid = next
	}
	if home != "" {
		panes := panePIDs(home)
		for _, pid := range chain {
			if n, ok := panes[pid]; ok {
				return Where{Home: home, Name: n, By: "ancestry"}, true
			}
		}
	}
	if name := os.Getenv(SeatEnv); name != "" {
		return Where{Home: os.Getenv(SeatHomeEnv), Name: name, By: "environment"}, true
	}
	return Where{}, false
}

// InsideSeat is Inside reduced to the seat's name.
func InsideSeat(home string) (string, bool) {
	w, ok := Inside(home)
	return w.Name, ok
}

// Is reports whether w is seat s (same name, same home directory).
func (w Where) Is(s Seat) bool {
	if w.Name != s.Name {
		return false
	}
	if w.Home == "" { // the environment marker without its home: the name decides
		return true
	}
	a, err1 := os.Stat(w.Home)
	b, err2 := os.Stat(s.Home)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// RefuseInside returns ErrInsideSeat for a steering command run inside any seat
// (docs/cli.md lists which commands steer).
func RefuseInside(home, what string) error {
	if w, ok := Inside(home); ok {
		return fmt.Errorf("%w: %s is not allowed from inside seat %q (its process tree, found by %s); run it from outside", ErrInsideSeat, what, w.Name, w.By)
	}
	return nil
}

// RefuseOtherSeat returns ErrInsideSeat when a caller inside a seat runs a
// command meant for its own seat (handoff note, handoff request, send to
// itself, done) against another seat. Outside every seat it allows anything.
func RefuseOtherSeat(s Seat, what string) error {
	if w, ok := Inside(s.Home); ok && !w.Is(s) {
		return fmt.Errorf("%w: %s for seat %q is not allowed from inside seat %q (found by %s)", ErrInsideSeat, what, s.Name, w.Name, w.By)
	}
	return nil
}

// execAncestor recognises a seat's pane process by its command line
// (PaneArgv): `PANTTY __exec HOME/seats/NAME/<launch record>`.
func execAncestor(pid int) (Where, bool) {
	return parsePaneArgv(cmdline(pid))
}

// parsePaneArgv is the inverse of PaneArgv.
func parsePaneArgv(argv []string) (Where, bool) {
	if len(argv) != 3 || argv[1] != "__exec" || !filepath.IsAbs(argv[2]) {
		return Where{}, false
	}
	dir := filepath.Dir(argv[2])
	seats := filepath.Dir(dir)
	if filepath.Base(seats) != "seats" || ValidateName(filepath.Base(dir)) != nil {
		return Where{}, false
	}
	return Where{Home: filepath.Dir(seats), Name: filepath.Base(dir), By: "ancestry"}, true
}

// panePIDs maps the pane pid each seat of home records to the seat's name.
func panePIDs(home string) map[int]string {
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
	return panes
}

// cmdline returns a process's argv (nil when it cannot be read).
func cmdline(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(data, []byte{0})), "\x00")
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
