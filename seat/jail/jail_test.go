package jail

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/state"
)

// A harness home that would show pantty's state is refused: one holding the
// state root, or another seat's directory.
func TestCheckWritableRefusesPanttysState(t *testing.T) {
	home := t.TempDir()
	s, _ := state.Open(home, "a")
	o, _ := state.Open(home, "b")
	if err := CheckWritable(s, []string{filepath.Join(s.HarnessDir(), "gemini-home"), "/srv/x"}); err != nil {
		t.Fatalf("the seat's own harness home refused: %v", err)
	}
	for _, bad := range []string{home, filepath.Dir(home), o.Dir, filepath.Join(o.Dir, "harness"), filepath.Dir(state.DropDir(s)), "rel"} {
		if CheckWritable(s, []string{bad}) == nil {
			t.Errorf("%s allowed", bad)
		}
	}
}

// Wrap hides the state root and the drop root after the read-only binds and
// binds the writable places after that; the door is named in the record and
// the environment.
func TestWrapOrdersHidingBeforeGrants(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("no bwrap")
	}
	dir := t.TempDir()
	s, _ := state.Open(filepath.Join(dir, "home"), "a")
	work := filepath.Join(dir, "work")
	hh := filepath.Join(s.HarnessDir(), "gemini-home")
	lf := state.LaunchFile{Argv: []string{"/usr/bin/true"}, Dir: work, Env: map[string]string{"PATH": "/usr/bin:/bin"}}
	out, err := Wrap(lf, Spec{Seat: s, Workdir: work, Writable: []string{hh}, Drop: state.DropDir(s),
		Sockets: []string{filepath.Join(dir, "tmux")}}, []string{"gemini-hook"})
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(out.Argv, " ")
	at := func(s string) int { return strings.Index(argv, s) }
	if at("--tmpfs "+s.Home) < 0 || at("--bind "+hh) < at("--tmpfs "+s.Home) || at("--bind "+work) < 0 ||
		at("--cap-drop ALL") < 0 || at("--unshare-pid") < 0 || !strings.HasSuffix(argv, "-- /usr/bin/true") {
		t.Fatalf("argv %s", argv)
	}
	if out.Door != DoorPath(s) || out.Env[DoorEnv] != out.Door || !slices.Equal(out.DoorFlags, []string{"gemini-hook"}) {
		t.Fatalf("door %q env %q flags %v", out.Door, out.Env[DoorEnv], out.DoorFlags)
	}
}

// The door runs calls for its own seat only, with a flag from its list.
func TestDoorRefusesAnotherSeatAndForeignFlags(t *testing.T) {
	d := Door{Home: "/h", Seat: "a", Pantty: "/bin/pantty", Flags: []string{"gemini-hook"}}
	if args, err := d.argv(Call{Seat: "a", Flag: "gemini-hook"}); err != nil || strings.Join(args, " ") != "--home /h hook --seat a --gemini-hook" {
		t.Fatalf("%v %v", args, err)
	}
	for _, c := range []Call{{Seat: "b"}, {Seat: "a", Flag: "home"}, {Seat: "a", Flag: "codex-notify"}} {
		if _, err := d.argv(c); err == nil {
			t.Errorf("%+v allowed", c)
		}
	}
	var errb bytes.Buffer
	if code := Send(filepath.Join(t.TempDir(), "none.sock"), Call{Seat: "a"}, strings.NewReader("{}"), &bytes.Buffer{}, &errb); code != 0 || !strings.Contains(errb.String(), "event not recorded") {
		t.Fatalf("an unreachable door: code %d, %q; want fail open", code, errb.String())
	}
}
