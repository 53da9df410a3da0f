package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pantty/pantty/seat/state"
)

// TestPaneArgvIsRecognised: the pane process's command line is how a caller
// inside a seat is found, whatever --home it passes; the driver's argv and the
// parser must stay each other's inverse, and nothing else may parse as a pane.
func TestPaneArgvIsRecognised(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s, err := state.Open(home, "rev-1")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := parsePaneArgv(PaneArgv("/usr/bin/pantty", s))
	if !ok || w.Name != "rev-1" || w.Home != home || w.By != "ancestry" || !w.Is(s) {
		t.Fatalf("PaneArgv(%s) parsed as %+v %v, want seat rev-1 in %s", s.Name, w, ok, home)
	}
	for _, argv := range [][]string{
		{"/usr/bin/pantty", "__drive", s.LaunchPath()},
		{"/usr/bin/pantty", "__exec"},
		{"/usr/bin/pantty", "__exec", "launch.toml"},
		{"/usr/bin/pantty", "__exec", filepath.Join(home, "other", "rev-1", "launch.toml")},
		{"/usr/bin/pantty", "__exec", filepath.Join(home, "seats", "Bad.Name", "launch.toml")},
		{"/usr/bin/pantty", "__exec", s.LaunchPath(), "extra"},
	} {
		if w, ok := parsePaneArgv(argv); ok {
			t.Errorf("%q parsed as a pane process of %+v", argv, w)
		}
	}
}

// paneStandIn starts a process whose command line is exactly argv (argv[0]
// is only a name) running the executable bin in dir, alive until the test
// ends: a real pane process when bin is this test binary (TestMain plays
// one), a forged one otherwise.
func paneStandIn(t *testing.T, bin, dir string, argv ...string) int {
	t.Helper()
	cmd := &exec.Cmd{Path: bin, Args: argv, Dir: dir}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// recordPane writes the pane pid into s's session.toml, as the driver does
// when tmux reports the pane.
func recordPane(t *testing.T, s state.Seat, pid int) {
	t.Helper()
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := s.SessionFile().Write(state.Session{Harness: "sim", PanePID: pid}); err != nil {
		t.Fatal(err)
	}
}

// TestOnlyARealPaneProcessPlacesACaller: a process is a seat's pane only when
// it runs pantty's binary and its seat's session.toml records its pid; a
// command line alone (a shell started as `exec -a pantty sh __exec
// …/seats/other/launch.toml`, even with a record naming it; the real binary
// with no record) places nobody. Of several panes in a caller's ancestry the
// outermost wins: the real pane is the root of its seat's tree.
func TestOnlyARealPaneProcessPlacesACaller(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	self, err := state.Open(home, "self")
	if err != nil {
		t.Fatal(err)
	}
	other, err := state.Open(home, "other")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	forgery := t.TempDir()
	if err := os.WriteFile(filepath.Join(forgery, "__exec"), []byte("read _\n:\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	real := paneStandIn(t, exe, home, PaneArgv("pantty", self)...)
	recordPane(t, self, real)
	shell := paneStandIn(t, "/bin/sh", forgery, PaneArgv("pantty", other)...)
	recordPane(t, other, shell) // the worst case: the record names the forger
	unrecorded := paneStandIn(t, exe, home, PaneArgv("pantty", other)...)

	if w, ok := execAncestor(shell); !ok || w.Name != "other" {
		t.Fatalf("the forged command line does not parse as seat other's pane (%+v %v): the test proves nothing", w, ok)
	}
	for _, c := range []struct {
		what string
		pid  int
		want string
	}{
		{"the real pane process of self", real, "self"},
		{"a shell with a pane's command line, recorded as other's pane", shell, ""},
		{"pantty's binary with other's command line, not recorded", unrecorded, ""},
	} {
		w, ok := paneProcess(c.pid)
		if got := map[bool]string{true: w.Name}[ok]; got != c.want {
			t.Errorf("%s (pid %d): seat %q, want %q", c.what, c.pid, got, c.want)
		}
	}

	// Innermost first, as ancestors lists them.
	if w, ok := outermostPane([]int{shell, unrecorded, real}); !ok || !w.Is(self) {
		t.Errorf("forged panes below self's pane: inside %+v %v, want seat self", w, ok)
	}
	if w, ok := outermostPane([]int{shell, unrecorded}); ok {
		t.Errorf("forged panes with no real pane above: inside %+v, want no seat", w)
	}
	recordPane(t, other, unrecorded) // now a real pane of other, below self's
	if w, ok := outermostPane([]int{unrecorded, real}); !ok || !w.Is(self) {
		t.Errorf("other's pane below self's: inside %+v %v, want the outermost, self", w, ok)
	}
}
