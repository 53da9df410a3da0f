package gemini_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/state"
)

// Gemini CLI has no sandbox pantty can use here, so isolation = auto runs the
// whole CLI in pantty's bubblewrap jail (seat/jail). Measured from the
// model's own shell tool (run_shell_command, run by the real CLI in yolo
// mode), as the Claude Code and Codex isolation tests do: seat.toml is not
// readable, another seat's control/, inbox and seat.toml are not writable,
// nor its drop directory; signals to the driver and the pane process fail
// (the jail's own pid namespace); the seat's tmux socket is not there; the
// workdir is readable and writable. The seat's own hooks still work through
// the hook door (the turns are processed), and `pantty handoff note` and
// `request` reach the driver through the drop directory. A hook call for
// another seat through the door is refused. pantty's system-scope settings
// (gemini.SystemSettingsPath) are readable and not writable.
func TestJailKeepsPanttyHomeOutOfReach(t *testing.T) {
	t.Parallel()
	// yolo: the shell tool runs with no confirmation dialog (docs/real-seats.md).
	r := newRig(t, "gm-jail", `permission_mode = "yolo"`, `ready_timeout = "90s"`)
	s := r.Seat()
	const canary = "PANTTY-CANARY-gm-3c41"
	f, err := os.OpenFile(s.ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "# %s\n", canary)
	f.Close()
	other, _ := state.Open(r.Home, "other")
	if err := seat.InitConfig(other, "sim", r.Work, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(other.ConfigPath())
	otherDrop := state.DropDir(other)
	for _, d := range []string{otherDrop, other.ControlDir(), filepath.Join(other.Dir, "inbox", "msgs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	const control = "CONTROL-CANARY-gm-9e02"
	// The shell writes what it saw here too (see below, where it is read).
	record := filepath.Join(r.Work, "jail-record.txt")
	if err := os.WriteFile(filepath.Join(r.Work, "outside.txt"), []byte(control+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Start()
	a, err := s.AuthorityFile().Read()
	if err != nil || !a.On() || a.Mechanism != jail.Mechanism {
		t.Fatalf("authority.toml %+v (%v): want isolation on by %s", a, err, jail.Mechanism)
	}
	if res := r.Run("status", r.Name); !strings.Contains(res.Stdout, config.IsolationOn) {
		t.Errorf("status does not say isolation on:\n%s", res)
	}

	cmd := fmt.Sprintf("{ cat %s; echo read=$?; cat outside.txt; echo work=$?; echo w > made.txt; echo workwrite=$?; "+
		"echo forged > %s/stop.toml; echo control=$?; echo x > %s/planted.toml; echo inbox=$?; "+
		"echo 'command = \"/bin/true\"' >> %s; echo seattoml=$?; echo x > %s/planted.req; echo otherdrop=$?; "+
		"kill -TERM %d; echo killdriver=$?; kill -TERM %d; echo killpane=$?; test -e %s; echo tmuxsock=$?; "+
		"ls /proc | grep -c '^[0-9]' | sed 's/^/procs=/'; ls -A %s/seats | sed 's/^/seatdir=/'; "+
		"%s hook --seat other < /dev/null; echo otherhook=$?; "+
		"%s handoff note 'GM-NOTE-CANARY from inside'; echo note=$?; %s handoff request; echo request=$?; "+
		"test -r \"$GEMINI_CLI_SYSTEM_SETTINGS_PATH\"; echo sysr=$?; echo '{}' > \"$GEMINI_CLI_SYSTEM_SETTINGS_PATH\"; echo sysw=$?; } > %s 2>&1; cat %s",
		s.ConfigPath(), other.ControlDir(), filepath.Join(other.Dir, "inbox", "msgs"), other.ConfigPath(), otherDrop,
		r.Owner().PID, r.Session().PanePID, r.Socket, r.Home, r.Bin, r.Bin, r.Bin, record, record)
	r.Send("j-tool", "run it\n[standin:bash="+cmd)
	r.Processed("j-tool")
	// The turn's reply is the model's text after the tool step, read from the
	// chat file past the tool results (a "user" message there).
	if rep, err := r.Seat().ReadReply(r.Status("j-tool")); err != nil || rep.Text != "stand-in: the tool's output arrived" {
		t.Errorf("j-tool's reply: %q, %v", rep.Text, err)
	}
	var out string
	for _, q := range r.api.Requests() {
		if q.Kind == "tool_result" {
			out += q.ToolOutput
		}
	}
	t.Logf("run_shell_command's output in the jail:\n%s", out)
	lastLine := regexp.MustCompile(`sysw=\d`) // the command's last line, not its text
	if !lastLine.MatchString(out) {
		// Gemini CLI 0.61.0 once handed back "Output: (empty)", exit 0, for
		// this command in a CI run while the note it sent did arrive: the CLI
		// lost its pty's output, pantty did not. The shell's own record in
		// the workdir is the same evidence, written by the same jailed shell.
		b, err := os.ReadFile(record)
		if err != nil || !lastLine.Match(b) {
			t.Fatalf("no tool output reached the stand-in and the shell left no record (%v)\ndriver.log:\n%s", err, r.DriverLog())
		}
		t.Logf("the tool output was lost by the CLI; the shell's record in the workdir:\n%s", b)
		out = string(b)
	}
	if strings.Contains(out, canary) || strings.Contains(out, "read=0") {
		t.Errorf("the jailed shell read seat.toml")
	}
	if !strings.Contains(out, control) || !strings.Contains(out, "workwrite=0") {
		t.Errorf("control: the jailed shell could not read and write the workdir")
	}
	// pantty's system-scope settings: read by the CLI, not writable by its
	// model (the home beside them is).
	if !strings.Contains(out, "sysr=0") {
		t.Errorf("the jailed CLI cannot read its system-scope settings")
	}
	for _, k := range []string{"control", "inbox", "seattoml", "otherdrop", "killdriver", "killpane", "tmuxsock", "sysw"} {
		if strings.Contains(out, k+"=0") || !strings.Contains(out, k+"=") {
			t.Errorf("%s: the write, signal or lookup was not refused", k)
		}
	}
	if !strings.Contains(out, "seatdir="+r.Name) || strings.Contains(out, "seatdir=other") {
		t.Errorf("the jail shows other seats' directories")
	}
	if !strings.Contains(out, "note=0") {
		t.Errorf("pantty handoff note through the drop directory failed")
	}
	if !strings.Contains(out, "refresh policy is") {
		t.Errorf("pantty handoff request got no answer from the driver")
	}
	notes, _ := filepath.Glob(filepath.Join(s.HandoffDir(), "notes", "*.md"))
	noted := false
	for _, n := range notes {
		b, _ := os.ReadFile(n)
		noted = noted || strings.Contains(string(b), "GM-NOTE-CANARY from inside")
	}
	if !noted {
		t.Errorf("the note from inside did not reach the seat's handoff")
	}
	if ents, _ := os.ReadDir(otherDrop); len(ents) != 0 {
		t.Errorf("the other seat's drop directory holds %d file(s)", len(ents))
	}
	if ents, _ := os.ReadDir(other.EventsDir()); len(ents) > 0 {
		for _, e := range ents {
			if !e.IsDir() {
				t.Errorf("a hook call for the other seat was recorded (%s)", e.Name())
			}
		}
	}
	if after, _ := os.ReadFile(other.ConfigPath()); string(after) != string(before) {
		t.Errorf("the other seat's seat.toml changed")
	}
	if _, live, _ := s.LiveOwner(); !live {
		t.Error("the seat's driver died: the model's shell signalled it")
	}
	// The seat goes on: its own hooks still reach pantty through the door.
	r.Send("j-after", "after the tool")
	r.Processed("j-after")
}
