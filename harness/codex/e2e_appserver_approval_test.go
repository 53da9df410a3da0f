package codex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
// person's "y" runs the command, and the message is processed.
func TestAppServerSeatLeavesAnApprovalToThePerson(t *testing.T) {
	r := newRig(t, "cxappr", appServerTOML)
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
	r.Start()

	r.Send("a1", "run it\n[standin:escalate]\n[standin:bash=touch refused.txt")
	r.Processed("a1")
	if _, err := os.Stat(filepath.Join(r.Work, "refused.txt")); err == nil {
		t.Error("a1: the command ran, though nobody could approve it")
	}
	rejected := false
	for _, q := range r.api.Requests() {
		rejected = rejected || q.Kind == "tool_result" && strings.Contains(q.ToolOutput, "approval request failed")
	}
	if !rejected || !strings.Contains(r.DriverLog(), "refused (no viewer runs to ask a person)") {
		t.Errorf("a1 before the viewer: want the approval refused and the model told (rejected %v)\ndriver.log:\n%s", rejected, r.DriverLog())
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
	if st := r.Status("a2"); st.State != inbox.StateSubmitted {
		t.Errorf("a2 while its approval waits: %s, want submitted", st.State)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "approved.txt")); err == nil {
		t.Fatal("a2's command ran before anyone approved it")
	}
	if err := r.Tmux().SendKeys(context.Background(), r.Session().PaneID, "y"); err != nil {
		t.Fatal(err)
	}
	r.Processed("a2")
	// The command's shell may outlive the turn: exec_command hands back what
	// a command did within its yield time, and an unsandboxed `bash -lc`
	// runs the login files of the user (a slow one was seen here).
	r.WaitFor("the approved command's file", 90*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(r.Work, "approved.txt"))
		return err == nil
	})
	if hb, err := r.Seat().HeartbeatFile().Read(); err != nil || strings.Contains(hb.Waiting, "asks for a person") {
		t.Errorf("heartbeat after the answer: %+v (%v): want the question gone", hb, err)
	}
	for _, l := range strings.Split(r.DriverLog(), "\n") {
		if strings.Contains(l, "app server asked") || strings.Contains(l, "answer at the viewer") || strings.Contains(l, "processed") {
			t.Log(l)
		}
	}
	if !strings.Contains(r.DriverLog(), "left to the person at the viewer") {
		t.Errorf("driver.log does not say the approval was left to the person:\n%s", r.DriverLog())
	}
}
