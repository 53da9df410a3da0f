package codex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// TestAppServerSeatDeliversOnce runs a codex seat with transport =
// "app-server" through the real CLI verbs: `seat start` gives the driver the
// seat's own app server and thread (no tmux pane), and two messages sent
// with `seat send` are each one turn/start: each reached the stand-in
// exactly once, its UserPromptSubmit (the guard header, the thread as the
// session) bound it, and it was processed with the turn's reply. The first
// is the hostile `/compact !touch FILE`: it reached the model as text, no
// compaction ran and no file was made.
func TestAppServerSeatDeliversOnce(t *testing.T) {
	r := newRig(t, "cxas", `transport = "app-server"`)
	t0 := time.Now()
	r.Start()
	t.Logf("seat start returned after %s", time.Since(t0).Round(time.Millisecond))
	sess := r.Session()
	if sess.ID == "" || sess.PaneID != "" || sess.PanePID == 0 || sess.TmuxName != "" {
		t.Fatalf("session.toml of an app-server seat: %+v", sess)
	}
	if r.ServerRunning() {
		t.Fatal("an app-server seat started a tmux server")
	}
	pwned := filepath.Join(r.Work, "pwned")
	texts := map[string]string{"as-1": "/compact !touch " + pwned, "as-2": "and a second message"}
	t1 := time.Now()
	r.Send("as-1", texts["as-1"])
	r.Send("as-2", texts["as-2"])
	r.Processed("as-1", "as-2")
	t.Logf("both messages processed %s after the first send", time.Since(t1).Round(time.Millisecond))

	turns := r.Turns()
	for id, text := range texts {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want once (all: %v)", id, turns[id], turns)
		}
		q, ok := r.Request(id)
		if !ok || !strings.Contains(q.NewInput, text) {
			t.Errorf("message %s: the model's input %q does not carry its text", id, q.NewInput)
		}
		st := r.Status(id)
		if st.State != inbox.StateProcessed || st.PromptID == "" || st.SessionID != sess.ID ||
			!strings.Contains(st.Reply, "msg="+id) {
			t.Errorf("message %s: status %+v", id, st)
		}
		t.Logf("%s: evidence %s, turn end %s", id, st.Evidence, st.TurnEnd)
	}
	if n, _, _ := r.compaction(); n != 0 {
		t.Errorf("%d compaction requests reached the stand-in", n)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the board text ran a shell command")
	}
	// The hooks ran in the app server: each message's UserPromptSubmit
	// carries its guard header on the seat's thread.
	bound := map[string]bool{}
	for _, ev := range r.Events(hookwire.EvUserPromptSubmit) {
		if id, _, _, ok := guard.MatchHeader(ev.Fields.Prompt); ok && ev.Fields.SessionID == sess.ID {
			bound[id] = true
		}
	}
	if !bound["as-1"] || !bound["as-2"] {
		t.Errorf("UserPromptSubmit with the header on thread %s: %v", sess.ID, bound)
	}
	// status names the transport; seat show names the witness of each step.
	if st := r.Run("status", "cxas"); st.Code != 0 || !regexp.MustCompile(`(?m)^\s*transport\s+app-server\s*$`).MatchString(st.Stdout) {
		t.Errorf("status cxas: %s", st)
	}
	if sh := r.Run("seat", "show", "cxas", "as-1"); sh.Code != 0 || !strings.Contains(sh.Stdout, "app-server turn/start") {
		t.Errorf("seat show cxas as-1: %s", sh)
	}
	// recover finds the seat ok (no pane to look for on this path), and a
	// stop ends the app server: its process and its socket are gone.
	rec := r.Run("recover", "--json")
	var rep seattest.SweepReport
	if err := json.Unmarshal([]byte(rec.Stdout), &rep); err != nil {
		t.Fatalf("recover --json: %v: %s", err, rec)
	}
	if sw := seattest.SeatReport(t, rep, "cxas"); sw.Verdict != "ok" || sw.Result != "" && sw.Result != "none" {
		t.Errorf("recover on a live app-server seat: %+v", sw)
	}
	if st := r.Run("seat", "stop", "cxas"); st.Code != 0 {
		t.Fatalf("seat stop: %s", st)
	}
	if running(sess.PanePID) {
		t.Errorf("the app server (pid %d) outlived seat stop", sess.PanePID)
	}
	if _, err := os.Lstat(filepath.Join(r.Seat().HarnessDir(), "app-server.sock")); err == nil {
		t.Error("the app server's socket outlived seat stop")
	}
	if log := r.DriverLog(); strings.Contains(log, seat.UnnamedTransition) || !strings.Contains(log, "on the seat's app server") {
		t.Errorf("driver.log:\n%s", log)
	}
}

// TestAppServerSeatCancelsByInterrupt cancels a slow turn on an app-server
// seat: `seat cancel` is turn/interrupt, verified by the turn's
// turn/completed with status interrupted; the message fails cancelled with
// no turn end of its own, and the next message is processed alone, once.
func TestAppServerSeatCancelsByInterrupt(t *testing.T) {
	r := newRig(t, "cxasc", `transport = "app-server"`)
	r.Start()
	r.Send("c1", standinkit.SlowMarker(30*time.Second)+" take your time")
	r.WaitState("c1", inbox.StateSubmitted, 60*time.Second)
	r.WaitFor("the slow reply to stream", 20*time.Second, func() bool {
		_, ok := r.Request("c1")
		return ok
	})
	began := time.Now()
	if res := r.Run("seat", "cancel", r.Name); res.Code != 0 {
		t.Fatalf("seat cancel: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	t.Logf("cancel took %s", time.Since(began).Round(time.Millisecond))
	st := r.Status("c1")
	if st.State != inbox.StateFailed || st.Reason != inbox.ReasonCancelled || st.TurnEnd != "" {
		t.Fatalf("c1 after cancel: %+v\ndriver.log:\n%s", st, r.DriverLog())
	}
	if !strings.Contains(r.DriverLog(), "interrupted (turn/completed)") {
		t.Fatalf("the cancel was not verified by turn/completed:\n%s", r.DriverLog())
	}
	if c := r.CursorAt("c1", inbox.StateFailed); c.ClosedBy != inbox.ReasonCancelled {
		t.Fatalf("the cursor passed c1 closed by %q, want the cancel", c.ClosedBy)
	}
	r.Send("c2", "after the cancel")
	r.Processed("c2")
	if n := r.Turns()["c2"]; n != 1 {
		t.Fatalf("c2 reached the model %d times", n)
	}
	if log := r.DriverLog(); strings.Contains(log, seat.UnnamedTransition) {
		t.Errorf("driver.log:\n%s", log)
	}
}

// TestAppServerSeatResumesAfterServerDeath SIGKILLs a seat's app server: its
// exit is the harness's exit, the driver starts a new server and resumes the
// same thread (thread/resume), and the next message's request carries the
// earlier exchange. Then the driver is SIGKILLed: its server runs on, and
// `seat stop` with no driver ends it.
func TestAppServerSeatResumesAfterServerDeath(t *testing.T) {
	r := newRig(t, "cxask", `transport = "app-server"`)
	r.Start()
	r.Send("k1", "remember this")
	r.Processed("k1")
	before := r.Session()
	first, _ := r.Request("k1")
	killed := time.Now()
	if err := syscall.Kill(before.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var after state.Session
	r.WaitFor("a new app server on the same thread", 60*time.Second, func() bool {
		after = r.Session()
		return after.Launches == before.Launches+1 && after.PanePID != before.PanePID && after.Resumed
	})
	t.Logf("resumed %s after the SIGKILL (pid %d -> %d)", time.Since(killed).Round(time.Millisecond), before.PanePID, after.PanePID)
	if after.ID != before.ID {
		t.Fatalf("session %s after the kill, want the same thread %s", after.ID, before.ID)
	}
	r.Send("k2", "what did I ask you to remember?")
	r.Processed("k2")
	second, _ := r.Request("k2")
	if second.History <= first.History || r.Turns()["k2"] != 1 || r.Turns()["k1"] != 1 {
		t.Fatalf("history %d then %d; turns %v", first.History, second.History, r.Turns())
	}
	if h, err := r.Seat().HarnessExitFile().Read(); err != nil || !strings.Contains(h.Why, "app server exited") {
		t.Fatalf("harness-exit.toml: %+v %v", h, err)
	}
	if log := r.DriverLog(); strings.Contains(log, seat.UnnamedTransition) {
		t.Errorf("driver.log:\n%s", log)
	}
	// A driver killed outright leaves its server running (its own process
	// group); `seat stop` with no driver ends it by the seat's markers, and
	// there is no tmux session to kill.
	r.KillDriver()
	if err := syscall.Kill(after.PanePID, 0); err != nil {
		t.Fatalf("the app server died with its driver: %v", err)
	}
	if st := r.Run("seat", "stop", r.Name); st.Code != 0 {
		t.Fatalf("seat stop with no driver: %s", st)
	}
	if running(after.PanePID) {
		t.Errorf("the app server (pid %d) outlived seat stop", after.PanePID)
	}
}

// running reports whether pid runs: a zombie (dead, not yet reaped by
// whatever adopted it after its driver went) does not.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestAppServerSeatHoldsOutages plays two of the stand-in's faults against
// an app-server seat (seattest.PlayOutage: three messages queued, none
// failed, the seat and recover name the outage in Codex's words, each
// processed once after it clears). The failure reaches the driver as on the
// tmux path: the PostModelRequest hook's StopFailure, run in the app server.
func TestAppServerSeatHoldsOutages(t *testing.T) {
	for _, o := range []struct {
		name  string
		fault standinkit.Fault
		class machine.Class
		words string
	}{
		{"Credential", standinkit.FaultAuth, machine.ClassMeans, "cannot authenticate: unexpected status 401 Unauthorized"},
		{"ServerError", standinkit.FaultServer, machine.ClassTransient, "server error: We’re currently experiencing high demand"},
	} {
		t.Run(o.name, func(t *testing.T) {
			r := newRig(t, "cxaso"+strings.ToLower(o.name[:1]), append([]string{`transport = "app-server"`}, seattest.OutageTOML...)...)
			r.PlayOutage(r.Faults, r.Answered, o.fault, o.class, o.words)
			if log := r.DriverLog(); strings.Contains(log, seat.UnnamedTransition) {
				t.Errorf("driver.log:\n%s", log)
			}
		})
	}
}

// TestAppServerSeatPaneIsAViewer: an app-server seat has no pane before its
// thread's first turn (the TUI cannot resume a thread without one); after it,
// the driver opens `codex resume <thread> --remote unix://<socket>` in the
// seat's tmux session, which shows the thread. The viewer's death is no
// harness exit: the server keeps running, the viewer is opened again, and
// the next message is processed once.
func TestAppServerSeatPaneIsAViewer(t *testing.T) {
	r := newRig(t, "cxasv", `transport = "app-server"`)
	r.Start()
	if r.ServerRunning() {
		t.Fatal("a tmux server before the thread's first turn")
	}
	r.Send("v1", "first")
	r.Processed("v1")
	var sess state.Session
	r.WaitFor("the viewer pane", 30*time.Second, func() bool {
		sess = r.Session()
		return sess.PaneID != "" && sess.TmuxName == r.Name
	})
	lf, err := r.Seat().LaunchFile().Read()
	if err != nil || strings.Join(lf.Argv[1:], " ") != "resume "+sess.ID+" --remote unix://"+filepath.Join(r.Seat().HarnessDir(), "app-server.sock") {
		t.Fatalf("launch.toml of the viewer: %+v %v", lf.Argv, err)
	}
	var screen string
	r.WaitFor("the viewer to show the thread", 30*time.Second, func() bool {
		screen = r.Screen()
		return strings.Contains(screen, "msg=v1")
	})
	t.Logf("viewer:\n%s", screen)
	panes, err := r.Tmux().ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, p := range panes {
		if p.ID == sess.PaneID {
			pid = p.PID
		}
	}
	died := time.Now()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM to the viewer's pane process %d: %v", pid, err)
	}
	r.WaitFor("the viewer opened again", 30*time.Second, func() bool {
		panes, _ := r.Tmux().ListPanes(context.Background())
		for _, p := range panes {
			if p.Session == r.Name && !p.Dead && p.PID != pid {
				return true
			}
		}
		return false
	})
	t.Logf("viewer opened again %s after its death", time.Since(died).Round(time.Millisecond))
	if after := r.Session(); after.PanePID != sess.PanePID || after.Launches != sess.Launches {
		t.Fatalf("the viewer's death touched the harness: %+v, was %+v", after, sess)
	}
	r.Send("v2", "second")
	r.Processed("v2")
	// A person's turn typed in the viewer: the driver sees it (the hook's
	// UserPromptSubmit without a header, the connection's turn/started) and
	// submits the board message only after it ended: never turn/start into
	// it, which would steer it (the board turn would carry its id).
	r.WaitFor("the reopened viewer to be ready", 30*time.Second, func() bool {
		return strings.Contains(r.Screen(), "Ready · "+sess.ID)
	})
	personTypes(t, r, r.Session().PaneID, standinkit.SlowMarker(3*time.Second)+" a person asks")
	var person hookwire.Event
	r.WaitFor("the person's prompt", 30*time.Second, func() bool {
		for _, ev := range r.Events(hookwire.EvUserPromptSubmit) {
			if _, _, _, ok := guard.MatchHeader(ev.Fields.Prompt); !ok {
				person = ev
				return true
			}
		}
		return false
	})
	r.Send("v3", "board during a person's turn")
	r.Processed("v3")
	st := r.Status("v3")
	var personEnd hookwire.Event
	for _, ev := range r.Events(hookwire.EvStop) {
		if ev.Fields.PromptID == person.Fields.PromptID {
			personEnd = ev
		}
	}
	if st.PromptID == person.Fields.PromptID || personEnd.Kind == "" || st.SubmittedAt.Before(personEnd.ReceivedAt) {
		t.Fatalf("v3 (turn %s, submitted %s) and the person's turn %s (ended %s)\ndriver.log:\n%s",
			st.PromptID, st.SubmittedAt, person.Fields.PromptID, personEnd.ReceivedAt, r.DriverLog())
	}
	t.Logf("v3 submitted %s after the person's turn ended", st.SubmittedAt.Sub(personEnd.ReceivedAt).Round(time.Millisecond))
	if turns := r.Turns(); turns["v1"] != 1 || turns["v2"] != 1 || turns["v3"] != 1 {
		t.Fatalf("turns %v", turns)
	}
	if log := r.DriverLog(); strings.Contains(log, seat.UnnamedTransition) {
		t.Errorf("driver.log:\n%s", log)
	}
}

// TestAppServerSeatIsRevivedByRecover: a driver killed outright, recover
// (as a scheduler runs it) starts a new one, which resumes the seat's
// thread on a new server, and the revival is verified. The pane-tree
// survivors rule took the running server and its viewer for an earlier
// launch's processes, so every revival of such a seat was "not verified",
// backed off and, after demote_after, stepped down the ladder.
func TestAppServerSeatIsRevivedByRecover(t *testing.T) {
	r := newRig(t, "cxasr", `transport = "app-server"`)
	r.Start()
	r.Send("r1", "before the kill")
	r.Processed("r1")
	before := r.Session()
	r.KillDriver()
	res := r.Run("recover", "--json")
	if res.Code != 0 || !strings.Contains(res.Stdout, "verified") {
		t.Fatalf("recover of an app-server seat whose driver was killed: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	if rec, err := r.Seat().RecoveryFile().Read(); err != nil || rec.Failures != 0 || rec.Revived != 1 {
		t.Fatalf("recovery.toml after a verified revival: %+v %v", rec, err)
	}
	if after := r.Session(); after.ID != before.ID {
		t.Fatalf("thread %s after the revival, want %s", after.ID, before.ID)
	}
	r.Send("r2", "after the revival")
	r.Processed("r2")
	if turns := r.Turns(); turns["r1"] != 1 || turns["r2"] != 1 {
		t.Fatalf("turns %v, want each once", turns)
	}
}
