package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// TestEveryCommandHasACallerPolicy pins the table of who may run what: every
// command with an action is classified, and the table names no command that
// does not exist. A new command fails here until it is decided whether a
// seat's own model may run it.
func TestEveryCommandHasACallerPolicy(t *testing.T) {
	t.Parallel()
	got := commandNames(newApp().Commands, "")
	var want []string
	for name := range callers {
		want = append(want, name)
	}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("commands with an action:\n  %v\ncaller policy table:\n  %v", got, want)
	}
}

// inSeatCase is one command run from a process the fake harness of seat "a"
// started, with the environment marker removed.
type inSeatCase struct {
	name  string
	args  []string // after --home
	via   string   // setsid, double-fork or child
	want  int      // exit code
	stdin string   // default "a message"
}

// forgedStop is a Stop hook event, what a forged turn end for another seat
// would look like.
const forgedStop = `{"hook_event_name":"Stop","session_id":"00000000-0000-0000-0000-000000000000","prompt_id":"p1"}`

// steeringArgs gives each steering command plausible arguments aimed at seat
// "b" (or at "a" itself): the refusal must come whatever they are.
func steeringArgs(name, launchB, work string) []string {
	args := strings.Fields(name)
	switch name {
	case "seat init":
		return append(args, "c", "--harness", "sim", "--workdir", work)
	case "seat command":
		return append(args, "a", "--", "/compact")
	case "seat retry":
		return append(args, "b", "x1")
	case "seat drop":
		return append(args, "b", "--queued")
	case "seat relay":
		return append(args, "b", "--off")
	case "seat compact", "seat probe", "seat cancel", "seat start", "seat stop", "seat attach", "seat rm", "__drive":
		return append(args, "b")
	case "__exec":
		return append(args, launchB)
	case "recover install":
		return append(args, "--cron")
	case "measure dispatch":
		return append(args, "--harness", "sim")
	}
	return args
}

// TestInSeatCallersAreRefusedByAncestry: the harness's own children detach
// with setsid or a double fork and drop PANTTY_SEAT; pantty's pane process
// (`pantty __exec`, a child subreaper) is still their ancestor, so every
// steering command is refused (exit 2, one line), the seat's own sanctioned
// commands still work, and another seat's files are unchanged. No tmux: the
// pane process runs the fake harness (a shell script) directly.
func TestInSeatCallersAreRefusedByAncestry(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "a")
	b := simSeat(t, h, "b")
	if err := b.LaunchFile().Write(state.LaunchFile{Argv: []string{"/bin/true"}}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, b.Dir)

	vias := []string{"setsid", "double-fork", "child"}
	var cases []inSeatCase
	i := 0
	for _, name := range commandNames(newApp().Commands, "") {
		if p := callers[name]; p != outside && p != outsideUnlessReadOnly {
			continue
		}
		cases = append(cases, inSeatCase{name, steeringArgs(name, b.LaunchPath(), h.Work), vias[i%3], 2, ""})
		i++
	}
	for _, via := range vias { // the measured escapes, each way
		cases = append(cases,
			inSeatCase{"seat stop other", []string{"seat", "stop", "b"}, via, 2, ""},
			inSeatCase{"seat command self", []string{"seat", "command", "a", "--", "/compact"}, via, 2, ""},
			inSeatCase{"handoff note other", []string{"handoff", "note", "--seat", "b", "planted"}, via, 2, ""},
			inSeatCase{"seat retry other", []string{"seat", "retry", "b", "x1"}, via, 2, ""})
	}
	cases = append(cases,
		inSeatCase{"handoff request other", []string{"handoff", "request", "--seat", "b"}, "setsid", 2, ""},
		inSeatCase{"seat send other", []string{"seat", "send", "b", "--id", "x2"}, "double-fork", 2, ""},
		inSeatCase{"seat done other", []string{"seat", "done", "b"}, "setsid", 2, ""},
		inSeatCase{"handoff note self", []string{"handoff", "note", "a note for my own handoff"}, "setsid", 0, ""},
		inSeatCase{"handoff note self named", []string{"handoff", "note", "--seat", "a", "named"}, "double-fork", 0, ""},
		inSeatCase{"seat send self", []string{"seat", "send", "a", "--id", "self1"}, "child", 0, ""},
		// A hook fails open (exit 0); the refusal shows as nothing recorded in b.
		inSeatCase{"hook for another seat", []string{"hook", "--seat", "b"}, "setsid", 0, forgedStop})

	var script strings.Builder
	script.WriteString("read _; cd " + tmux.ShellQuote(h.Work) + "\n")
	for i, c := range cases {
		argv := []string{h.Bin, "--home", h.Home}
		argv = append(argv, c.args...)
		for j := range argv {
			argv[j] = tmux.ShellQuote(argv[j])
		}
		stdin := c.stdin
		if stdin == "" {
			stdin = "a message"
		}
		inner := fmt.Sprintf("echo %s | env -u %s -u %s %s >out%d 2>&1; echo $? >code%d.tmp; mv code%d.tmp code%d",
			tmux.ShellQuote(stdin), launch.SeatEnv, launch.SeatHomeEnv, strings.Join(argv, " "), i, i, i, i)
		switch c.via {
		case "setsid":
			script.WriteString("setsid -f sh -c " + tmux.ShellQuote(inner) + "\n")
		case "double-fork":
			script.WriteString("( (sh -c " + tmux.ShellQuote(inner) + ") & )\n")
		default:
			script.WriteString("sh -c " + tmux.ShellQuote(inner) + "\n")
		}
	}
	// A detached process that would outlive the harness: the pane process ends it.
	script.WriteString("setsid -f sh -c 'echo $$ >lingering.tmp; mv lingering.tmp lingering.pid; exec sleep 600' </dev/null >/dev/null 2>&1\n")
	script.WriteString("exec sleep 600\n")

	// The harness has pantty's in-seat markers; every attempt removes them.
	pane, exited := startPane(t, h, script.String(), map[string]string{launch.SeatEnv: "a", launch.SeatHomeEnv: h.Home})
	a := h.Seat()

	h.WaitFor("every in-seat command to finish", 2*time.Minute, func() bool {
		for i := range cases {
			if _, err := os.Stat(filepath.Join(h.Work, fmt.Sprintf("code%d", i))); err != nil {
				return false
			}
		}
		_, err := os.Stat(filepath.Join(h.Work, "lingering.pid"))
		return err == nil
	})
	for i, c := range cases {
		code, _ := os.ReadFile(filepath.Join(h.Work, fmt.Sprintf("code%d", i)))
		out, _ := os.ReadFile(filepath.Join(h.Work, fmt.Sprintf("out%d", i)))
		got := strings.TrimSpace(string(code))
		if got != fmt.Sprint(c.want) {
			t.Errorf("%s via %s (pantty %s): exit %s, want %d; output %q", c.name, c.via, strings.Join(c.args, " "), got, c.want, out)
			continue
		}
		if (c.want == 2 || c.stdin == forgedStop) && (!strings.Contains(string(out), `inside seat "a"`) || strings.Count(string(out), "\n") != 1) {
			t.Errorf("%s via %s: want one line naming seat a, got %q", c.name, c.via, out)
		}
	}
	if after := tree(t, b.Dir); !reflect.DeepEqual(before, after) {
		t.Errorf("seat b's files changed from inside seat a:\nbefore %v\nafter  %v", before, after)
	}
	// The control: the same hook call from outside any seat does record.
	if r := h.RunStdin(forgedStop, "hook", "--seat", "b"); r.Code != 0 || reflect.DeepEqual(before, tree(t, b.Dir)) {
		t.Errorf("hook --seat b from outside: %s; want an event recorded in b (the control for the refusal above)", r)
	}
	if notes, _ := os.ReadDir(filepath.Join(a.Dir, "handoff", "notes")); len(notes) == 0 {
		t.Errorf("handoff note for its own seat wrote nothing under %s", filepath.Join(a.Dir, "handoff", "notes"))
	}

	// Orphans the pane process adopted are reaped as they exit (pid 1 does not
	// reap here): in the end its only children are the harness and the lingering
	// detached process, and no zombie.
	lingering := readPID(t, filepath.Join(h.Work, "lingering.pid"))
	harness, err := proc.HarnessPID(pane.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var kids map[int]string
	h.WaitFor("the pane process to have reaped every exited orphan", time.Minute, func() bool {
		kids = childStates(pane.Process.Pid)
		return len(kids) == 2 && kids[harness] != "" && kids[harness] != "Z" && kids[lingering] != "" && kids[lingering] != "Z"
	})

	// The harness ends (SIGTERM to the pane pid is forwarded to it): the pane
	// process dies of the same signal, after ending what the harness left.
	pane.Process.Signal(syscall.SIGTERM)
	err = <-exited
	exited <- err
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("pane process after SIGTERM: %v, want killed by SIGTERM like its harness", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", lingering)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the detached process %d outlived the harness (%v)", lingering, err)
	}
}

// simSeat initialises another simulator seat beside h's, not started.
func simSeat(t *testing.T, h *seattest.Harness, name string) state.Seat {
	t.Helper()
	s, err := state.Open(h.Home, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(s, "sim", h.Work, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// tree lists the files under dir with their sizes.
func tree(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				out[strings.TrimPrefix(p, dir)] = fi.Size()
			}
		}
		return nil
	})
	return out
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatalf("%s: %q", path, b)
	}
	return pid
}

// childStates maps each child of pid to its state letter (Z for a zombie).
func childStates(pid int) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var p int
		if _, err := fmt.Sscan(e.Name(), &p); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == fmt.Sprint(pid) {
			out[p] = f[0]
		}
	}
	return out
}

// TestForgedPaneProcessGrantsNothing: a seat's model can start a process
// whose command line is a pane process's for another seat (`exec -a pantty
// sh __exec …/seats/b/launch.toml`, the script named __exec), and, with
// isolation off, even rewrite b's session.toml to record its pid. Below seat
// a's real pane process it is ignored: the outermost real pane decides, so
// b's own-seat commands (a note for b, a hook for b) are refused as inside a,
// and a note without --seat lands in a. With no real pane above it, the
// forgery places nobody: a note without --seat has no seat to go to.
func TestForgedPaneProcessGrantsNothing(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "a")
	b := simSeat(t, h, "b")
	forge := filepath.Join(h.Work, "forge")
	if err := os.MkdirAll(forge, 0o700); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		argv := append([]string{h.Bin, "--home", h.Home}, args...)
		for i := range argv {
			argv[i] = tmux.ShellQuote(argv[i])
		}
		return fmt.Sprintf("echo %s | env -u %s -u %s %s >%s.out 2>&1; echo $? >%s.code\n",
			tmux.ShellQuote(forgedStop), launch.SeatEnv, launch.SeatHomeEnv, strings.Join(argv, " "), name, name)
	}
	// The forger claims b's pane pid in b's own record first (isolation off:
	// the model's shell can write it), then acts as b.
	script := fmt.Sprintf("printf 'harness = \"sim\"\\npane_pid = %%d\\n' $$ >%s\n", tmux.ShellQuote(b.SessionPath())) +
		run("note-b", "handoff", "note", "--seat", "b", "PLANTED-IN-B") +
		run("note-mine", "handoff", "note", "MINE-FROM-BELOW-A") +
		run("hook-b", "hook", "--seat", "b") +
		run("stop-b", "seat", "stop", "b") +
		"echo done >finished\n"
	if err := os.WriteFile(filepath.Join(forge, "__exec"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	forged := "cd " + tmux.ShellQuote(forge) + " && exec bash -c " +
		tmux.ShellQuote("exec -a pantty /bin/sh __exec "+tmux.ShellQuote(b.LaunchPath()))

	startPane(t, h, "read _; "+forged+"; exec sleep 600", map[string]string{launch.SeatEnv: "a", launch.SeatHomeEnv: h.Home})
	h.WaitFor("the forged pane's commands to finish", 2*time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(forge, "finished"))
		return err == nil
	})
	result := func(name string) (string, string) {
		code, _ := os.ReadFile(filepath.Join(forge, name+".code"))
		out, _ := os.ReadFile(filepath.Join(forge, name+".out"))
		return strings.TrimSpace(string(code)), string(out)
	}
	for _, c := range []struct{ name, code string }{{"note-b", "2"}, {"hook-b", "0"}, {"stop-b", "2"}} {
		code, out := result(c.name)
		if code != c.code || !strings.Contains(out, `inside seat "a"`) {
			t.Errorf("%s below a's pane with a forged pane for b: exit %s %q; want exit %s refused as inside seat a", c.name, code, out, c.code)
		}
	}
	if code, out := result("note-mine"); code != "0" {
		t.Errorf("handoff note without --seat below a's pane: exit %s %q, want 0 (a's own)", code, out)
	}
	notes := func(s state.Seat) string {
		var all strings.Builder
		files, _ := filepath.Glob(filepath.Join(s.HandoffDir(), "notes", "*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			all.Write(b)
		}
		return all.String()
	}
	if got := notes(h.Seat()); !strings.Contains(got, "MINE-FROM-BELOW-A") {
		t.Errorf("the note without --seat did not land in a (a's notes %q)", got)
	}
	if got := notes(b); got != "" {
		t.Errorf("b got notes from below a's pane: %q", got)
	}
	if evs, _ := b.PendingEvents(); len(evs) != 0 {
		t.Errorf("b recorded %d hook event(s) from below a's pane", len(evs))
	}

	// Outside every seat: the same forgery, and no marker, places nobody.
	outside := filepath.Join(h.Work, "outside")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "__exec"), []byte(run("note", "handoff", "note", "FORGED-OUTSIDE")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "exec -a pantty /bin/sh __exec "+tmux.ShellQuote(b.LaunchPath()))
	cmd.Dir, cmd.Env = outside, h.Env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("forged pane outside every seat: %v %s", err, out)
	}
	code, _ := os.ReadFile(filepath.Join(outside, "note.code"))
	out, _ := os.ReadFile(filepath.Join(outside, "note.out"))
	if strings.TrimSpace(string(code)) != "2" || !strings.Contains(string(out), "no seat") {
		t.Errorf("handoff note under a forged pane outside every seat: exit %s %q, want 2 (no seat)", code, out)
	}
	if got := notes(b); got != "" {
		t.Errorf("b got notes from a forged pane outside every seat: %q", got)
	}
}
