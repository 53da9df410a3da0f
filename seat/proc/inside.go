package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// Where names the seat a process runs inside, and how that was found.
type Where struct {
	Home, Name string
	// By is "ancestry" (an ancestor is a seat's pane process, proven by the
	// kernel's records, which a child cannot change) or "environment" (only the
	// PANTTY_SEAT marker, which a process can drop or forge).
	By string
}

// Inside reports whether this process runs inside a seat's process tree, and
// which seat. Ancestry comes first and wins over the environment: the pane's
// first process (`pantty __exec`, a child subreaper, see paneexec.Run) is an
// ancestor of everything the harness starts, setsid and double-forked children
// included, so no seat marker is needed and a forged PANTTY_SEAT cannot pose as
// another seat.
//
// An ancestor counts only when it is really a seat's pane process (paneProcess:
// pantty's own binary, and the pid its seat's session.toml records), and the
// outermost one wins: a process the model starts can carry any command line
// (`exec -a`, a copied binary), but it is always below its own seat's pane.
// A pane-like command line that proves nothing is ignored: whoever made it
// could have run the same command without it, so it neither grants nor
// refuses. The environment marker alone still counts as inside (refusing is
// the safe side).
func Inside() (Where, bool) {
	if w, ok := outermostPane(ancestors(os.Getppid())); ok {
		return w, true
	}
	if name := os.Getenv(launch.SeatEnv); name != "" {
		return Where{Home: os.Getenv(launch.SeatHomeEnv), Name: name, By: "environment"}, true
	}
	return Where{}, false
}

// InsideSeat is Inside reduced to the seat's name.
func InsideSeat() (string, bool) {
	w, ok := Inside()
	return w.Name, ok
}

// Is reports whether w is seat s (same name, same home directory).
func (w Where) Is(s state.Seat) bool {
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
func RefuseInside(what string) error {
	if w, ok := Inside(); ok {
		return fmt.Errorf("%w: %s is not allowed from inside seat %q (its process tree, found by %s); run it from outside", state.ErrInsideSeat, what, w.Name, w.By)
	}
	return nil
}

// RefuseOtherSeat returns ErrInsideSeat when a caller inside a seat runs a
// command meant for its own seat (handoff note, handoff request, send to
// itself, done) against another seat. Outside every seat it allows anything.
func RefuseOtherSeat(s state.Seat, what string) error {
	if w, ok := Inside(); ok && !w.Is(s) {
		return fmt.Errorf("%w: %s for seat %q is not allowed from inside seat %q (found by %s)", state.ErrInsideSeat, what, s.Name, w.Name, w.By)
	}
	return nil
}

// ancestors lists pid and its ancestors, innermost first, up to pid 1.
func ancestors(pid int) []int {
	var chain []int
	for pid > 1 && len(chain) < maxAncestry {
		chain = append(chain, pid)
		next, err := parentPID(pid)
		if err != nil || next == pid {
			break
		}
		pid = next
	}
	return chain
}

// maxAncestry bounds the walk (a process tree deeper than this is not one
// pantty made; the bound only keeps a corrupt /proc from looping forever).
const maxAncestry = 4096

// outermostPane finds the outermost process of chain (innermost first) that is
// a seat's pane process. Outermost, because the real pane is the root of its
// seat's tree: anything that looks like a pane below it was started by the
// seat's own processes.
func outermostPane(chain []int) (Where, bool) {
	for i := len(chain) - 1; i >= 0; i-- {
		if w, ok := paneProcess(chain[i]); ok {
			return w, true
		}
	}
	return Where{}, false
}

// paneProcess reports whether pid is a seat's pane process, and whose: its
// command line is PaneArgv's (`PANTTY __exec HOME/seats/NAME/launch.toml`), it
// runs pantty's own binary (runsOurBinary; not a shell or a copy with the same
// argv), and it is the pane pid that seat's session.toml records (the driver
// writes it when tmux reports the pane). A process started by a seat's model
// can copy the command line, but not the binary identity nor the record of a
// seat it does not own: the real binary refuses `__exec` inside a seat.
func paneProcess(pid int) (Where, bool) {
	w, ok := execAncestor(pid)
	if !ok || !runsOurBinary(pid) {
		return Where{}, false
	}
	s, err := state.Open(w.Home, w.Name)
	if err != nil {
		return Where{}, false
	}
	if sess, err := s.SessionFile().Read(); err != nil || sess.PanePID != pid {
		return Where{}, false
	}
	return w, true
}

// runsOurBinary reports whether pid runs the same executable file as this
// process (the kernel's /proc/PID/exe, which argv cannot change), or the file
// that was at our path before it was replaced: a pane started before pantty
// was upgraded in place runs the old, now deleted, binary.
func runsOurBinary(pid int) bool {
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	a, err1 := os.Stat(exe)
	b, err2 := os.Stat("/proc/self/exe")
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		return true
	}
	theirs, err1 := os.Readlink(exe)
	ours, err2 := os.Readlink("/proc/self/exe")
	return err1 == nil && err2 == nil && theirs == ours+" (deleted)"
}

// execAncestor recognises a pane process's command line (PaneArgv):
// `PANTTY __exec HOME/seats/NAME/<launch record>`. The command line alone
// proves nothing (paneProcess checks the rest).
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
	if filepath.Base(seats) != "seats" || state.ValidateName(filepath.Base(dir)) != nil {
		return Where{}, false
	}
	return Where{Home: filepath.Dir(seats), Name: filepath.Base(dir), By: "ancestry"}, true
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
