package codex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/inbox"
)

// TestAppServerSeatLeavesAnApprovalToThePerson: with the seat's Codex
// config asking for approvals (approval_policy = "on-request", under
// pantty's sandbox profile), a command the model asks to run outside the
// sandbox ([standin:escalate]) is a question for a person, sent by the app
// server to every client. Before the viewer opens (the thread's first turn)
// nobody could answer it: the driver refuses it at once, Codex tells the
// model the command was rejected, and the message is processed with nothing
// run. Once the viewer runs, the question is left to the person there, as a
// dialog is on the tmux path: the viewer draws Codex's approval dialog,
// status names the question while the message stays submitted, the
// person's "y" runs the command, the question is no longer named, and the
// message is processed. A question left to a viewer that then dies is
// refused when its process exits: the turn goes on as with no viewer,
// without waiting for its ceiling.
func TestAppServerSeatLeavesAnApprovalToThePerson(t *testing.T) {
	r := askingRig(t, "cxappr", appServerTOML)
	r.Start()

	r.Send("a1", "run it\n[standin:escalate]\n[standin:bash=touch refused.txt")
	r.Processed("a1")
	// The model's being told is the proof: a refused command never runs, and
	// one that ran could still be running at the turn's end (below).
	if n := rejections(r); n != 1 || !strings.Contains(r.DriverLog(), "refused (no viewer runs to ask a person)") {
		t.Errorf("a1 before the viewer: want the approval refused and the model told once (told %d times)\ndriver.log:\n%s", n, r.DriverLog())
	}

	r.WaitFor("the viewer ready on the thread", 60*time.Second, func() bool {
		s := r.Session()
		return s.PaneID != "" && strings.Contains(r.Screen(), "Ready · "+s.ID)
	})
	r.Send("a2", "run it\n[standin:escalate]\n[standin:bash=touch approved.txt")
	r.WaitFor("Codex's approval dialog in the viewer", 60*time.Second, func() bool {
		return strings.Contains(r.Screen(), "Would you like to run the following command?")
	})
	r.WaitFor("the heartbeat naming the question", 10*time.Second, func() bool {
		hb, err := r.Seat().HeartbeatFile().Read()
		return err == nil && strings.Contains(hb.Waiting, "a2: the harness asks for a person (item/commandExecution/requestApproval)")
	})
	res := r.Run("status", r.Name)
	if res.Code != 0 || !strings.Contains(res.Stdout, "asks for a person") {
		t.Errorf("status while the approval waits: want the question named; got %s", res)
	}
	t.Logf("status while the approval waits:\n%s", res.Stdout)
	personApproves(t, r, "a2", "approved.txt")
	if !strings.Contains(r.DriverLog(), "message a2: the person's answer at the viewer came") {
		t.Errorf("driver.log does not say the person's answer came (serverRequest/resolved):\n%s", r.DriverLog())
	}
	if log := r.DriverLog(); !strings.Contains(log, "left to the person at the viewer") || strings.Contains(log, "mid-turn (permission_request)") {
		t.Errorf("driver.log: want the approval left to the person, and the PermissionRequest hook's copy of it not acted on:\n%s", log)
	}

	// The viewer dies while a question waits on it.
	r.Send("a3", "run it\n[standin:escalate]\n[standin:bash=touch orphaned.txt")
	r.WaitFor("a3's approval dialog in the viewer", 60*time.Second, func() bool {
		return strings.Contains(r.Screen(), "touch orphaned.txt") && strings.Contains(r.Screen(), "Would you like to run the following command?")
	})
	panes, err := r.Tmux().ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range panes {
		if p.ID == r.Session().PaneID {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.Processed("a3")
	if n := rejections(r); n != 2 || !strings.Contains(r.DriverLog(), "1 question(s) left to the person at the viewer refused: the viewer pane's process exited") {
		t.Errorf("a3 after its viewer died: want its approval refused and the model told (told %d times in all)\ndriver.log:\n%s", n, r.DriverLog())
	}
	if log := r.DriverLog(); !strings.Contains(log, "message a3: its question was refused with the viewer gone") ||
		strings.Contains(log, "message a3: the person's answer") {
		t.Errorf("driver.log for a3: want the question's refusal named, not a person's answer:\n%s", log)
	}
	for _, l := range strings.Split(r.DriverLog(), "\n") {
		if strings.Contains(l, "app server asked") || strings.Contains(l, "question") || strings.Contains(l, "processed") {
			t.Log(l)
		}
	}
}

// askingRig is a rig whose seat runs under pantty's sandbox profile with
// Codex asking before a command leaves the sandbox (approval_policy =
// "on-request" in the seat's config.toml, which pantty keeps).
func askingRig(t *testing.T, name string, toml ...string) *rig {
	r := newRig(t, name, toml...)
	isolate(t, r)
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	// A top-level key goes before the file's tables.
	conf := filepath.Join(codex.Home(r.Seat(), cfg), "config.toml")
	old, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, append([]byte("approval_policy = \"on-request\"\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTmuxSeatNamesAnApprovalDialog: on the tmux path, Codex's approval
// dialog for a board message's command is named by status, as Claude Code's
// permission prompt is: pantty's PermissionRequest hook (translated into a
// Notification, permission_request) prints nothing, so the dialog is drawn
// as without it; the heartbeat names the command while the message stays
// submitted and nothing has run; a person's "y" in the pane runs it and the
// message is processed.
func TestTmuxSeatNamesAnApprovalDialog(t *testing.T) {
	r := askingRig(t, "cxtappr")
	r.Start()
	r.Send("t1", "run it\n[standin:escalate]\n[standin:bash=touch approved.txt")
	const named = "t1: the harness asks for a person (permission_request): Bash: touch approved.txt (stand-in: this command asks to run outside the sandbox)"
	r.WaitFor("the heartbeat naming the approval", 60*time.Second, func() bool {
		hb, err := r.Seat().HeartbeatFile().Read()
		return err == nil && hb.Waiting == named
	})
	// The hook runs before Codex draws the dialog; the person answers what
	// is on the screen.
	r.WaitFor("Codex's approval dialog on the pane", 30*time.Second, func() bool {
		return strings.Contains(r.Screen(), "Would you like to run the following command?")
	})
	if res := r.Run("status", r.Name); res.Code != 0 || !strings.Contains(res.Stdout, "asks for a person (permission_request): Bash: touch approved.txt") {
		t.Errorf("status while the dialog waits: want the command named; got %s", res)
	}
	personApproves(t, r, "t1", "approved.txt")
}

// personApproves: while message id's question waits on the pane, the
// message is submitted and its command (which creates file in the workdir)
// has not run; a person's "y" in the pane answers it, the message is
// processed and the command runs. The command's shell may outlive the turn:
// exec_command hands back what a command did within its yield time, and an
// unsandboxed `bash -lc` runs the user's login files (a slow one was seen
// here).
func personApproves(t *testing.T, r *rig, id, file string) {
	t.Helper()
	if st := r.Status(id); st.State != inbox.StateSubmitted {
		t.Errorf("%s while its question waits: %s, want submitted", id, st.State)
	}
	if _, err := os.Stat(filepath.Join(r.Work, file)); err == nil {
		t.Fatalf("%s's command ran before anyone approved it", id)
	}
	if err := r.Tmux().SendKeys(context.Background(), r.Session().PaneID, "y"); err != nil {
		t.Fatal(err)
	}
	r.Processed(id)
	r.WaitFor("the approved command's file", 90*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(r.Work, file))
		return err == nil
	})
}

// rejections counts the tool results that told the model its command's
// approval was refused.
func rejections(r *rig) (n int) {
	for _, q := range r.api.Requests() {
		if q.Kind == "tool_result" && strings.Contains(q.ToolOutput, "approval request failed") {
			n++
		}
	}
	return n
}
