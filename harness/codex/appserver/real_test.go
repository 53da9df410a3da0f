package appserver_test

// Tests against the REAL Codex CLI's app server, pointed at the loopback
// Responses-API stand-in through a private CODEX_HOME. They need the binary
// scripts/test.sh installs (or PANTTY_CODEX_BIN); without it they skip,
// except under CI, where a missing harness is a failure (seattest.RealBinary).
// With PANTTY_APPSERVER_RECORD=DIR each test writes what it measured there
// as JSON lines (the artifact docs/codex.md cites).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/seattest"
)

type rig struct {
	t    *testing.T
	bin  string
	home string
	dir  string // the workdir
	sock string
	api  *standin.Server
	srv  *appserver.Server
	c    *appserver.Conn
}

// newRig starts a stand-in, a CODEX_HOME naming it, and an app server on a
// socket in the test's directory, connected and initialized.
func newRig(t *testing.T) *rig {
	t.Helper()
	bin := seattest.RealBinary(t, codex.CachedBinary, "Codex CLI", codex.Version, codex.BinaryEnv)
	root := t.TempDir()
	r := &rig{t: t, bin: bin, home: filepath.Join(root, "codex-home"), dir: filepath.Join(root, "work"), sock: filepath.Join(root, "app.sock")}
	os.MkdirAll(r.dir, 0o700)
	api, err := standin.Start(standin.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	r.api = api
	os.MkdirAll(r.home, 0o700)
	cfg := "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\ncheck_for_update_on_startup = false\n" +
		"[projects.\"" + r.dir + "\"]\ntrust_level = \"trusted\"\n"
	if err := os.WriteFile(filepath.Join(r.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := codex.WriteProvider(r.home, "standin", api.URL()+"/v1", "STANDIN_API_KEY", "gpt-5.1-codex"); err != nil {
		t.Fatal(err)
	}
	r.start()
	return r
}

func (r *rig) start() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := appserver.Start(ctx, appserver.Spec{Bin: r.bin, Home: r.home, Socket: r.sock, Dir: r.dir,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "STANDIN_API_KEY=standin-key"}, Stderr: testWriter{r.t}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { srv.Stop() })
	c, err := srv.Dial(ctx, "pantty-test", "1")
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	r.srv, r.c = srv, c
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("app-server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (r *rig) thread() appserver.Thread {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	th, err := r.c.StartThread(ctx, r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	return th
}

// seen is one notification and when it came.
type seen struct {
	At     time.Duration   `json:"at_ms"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// turnEnd reads notifications until turnID's turn/completed (or limit).
func (r *rig) turnEnd(start time.Time, turnID string, limit time.Duration) (appserver.Turn, []seen) {
	r.t.Helper()
	var log []seen
	deadline := time.After(limit)
	for {
		select {
		case m, ok := <-r.c.Notifications():
			if !ok {
				r.t.Fatalf("connection ended before the turn's end: %v (seen %v)", r.c.Err(), methods(log))
			}
			log = append(log, seen{At: time.Since(start) / time.Millisecond, Method: m.Method, Params: m.Params})
			if m.Method == appserver.MethodTurnCompleted {
				var n appserver.TurnNote
				json.Unmarshal(m.Params, &n)
				if n.Turn.ID == turnID {
					return n.Turn, log
				}
			}
		case <-deadline:
			r.t.Fatalf("no turn/completed for %s within %s (seen %v)", turnID, limit, methods(log))
		}
	}
}

func methods(log []seen) []string {
	var out []string
	for _, s := range log {
		out = append(out, s.Method)
	}
	return out
}

func first(log []seen, method string) (seen, bool) {
	for _, s := range log {
		if s.Method == method {
			return s, true
		}
	}
	return seen{}, false
}

// record appends v as one JSON line to DIR/name when PANTTY_APPSERVER_RECORD is set.
func record(t *testing.T, name string, v any) {
	dir := os.Getenv("PANTTY_APPSERVER_RECORD")
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := json.Marshal(v)
	f.Write(append(b, '\n'))
}

func guarded(t *testing.T, id, text string) guard.Submission {
	s, err := guard.Guard(guard.Message{ID: id, From: "alice", Text: text}, guard.DispatchFacts{Form: guard.FormFirstChar, Sigils: "/!"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestATurnEndsWithItsReply: a guarded message through turn/start is
// accepted with its turn id, turn/started and turn/completed follow with
// the agent's reply (quoting the header: the text reached the model as it
// was sent), and thread/tokenUsage/updated carries the request's usage.
// It measures the latencies of several turns on one thread.
func TestATurnEndsWithItsReply(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	const n = 5
	var acc, started, completed []int
	for i := range n {
		s := guarded(t, "m"+string(rune('1'+i)), "say hello")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := time.Now()
		turn, err := r.c.Submit(ctx, th.ID, s)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		a := time.Since(t0)
		if turn.ID == "" || turn.Status != appserver.StatusInProgress {
			t.Fatalf("turn/start answered %+v", turn)
		}
		end, log := r.turnEnd(t0, turn.ID, 60*time.Second)
		if end.Status != appserver.StatusCompleted {
			t.Fatalf("turn ended %s: %+v", end.Status, end.Error)
		}
		done, _ := first(log, appserver.MethodTurnCompleted)
		e, ok := appserver.TurnEnd(appserver.Message{Method: done.Method, Params: done.Params})
		reply := e.Reply
		if !ok || e.TurnID != turn.ID || e.Status != appserver.StatusCompleted || !strings.Contains(reply, s.Header()) {
			t.Fatalf("reply %q does not quote the header %q (turn/completed items: %d)", reply, s.Header(), len(end.Items))
		}
		st, ok := first(log, appserver.MethodTurnStarted)
		if !ok {
			t.Fatalf("no turn/started: %v", methods(log))
		}
		u, ok := first(log, appserver.MethodTokenUsage)
		if !ok {
			t.Fatalf("no thread/tokenUsage/updated: %v", methods(log))
		}
		usage, ok := appserver.ContextOf(appserver.Message{Method: u.Method, Params: u.Params})
		if !ok || usage.Input <= 0 || usage.Window <= 0 || usage.TurnID != turn.ID {
			t.Fatalf("token usage %+v", usage)
		}
		acc, started, completed = append(acc, int(a/time.Millisecond)), append(started, int(st.At)), append(completed, int(done.At))
		t.Logf("turn %d: accepted %s, started %dms, completed %dms; context %+v; methods %v",
			i, a, st.At, done.At, usage, methods(log))
		record(t, "turns.jsonl", map[string]any{"turn": i, "accepted_ms": a.Milliseconds(), "reply": reply, "status": end.Status, "notifications": log})
	}
	t.Logf("n=%d: turn/start answered %v ms, turn/started %v ms, turn/completed %v ms (sorted)", n, sorted(acc), sorted(started), sorted(completed))
	reqs := r.api.Requests()
	turns := 0
	for _, q := range reqs {
		if q.Kind == "turn" {
			turns++
		}
	}
	if turns != n {
		t.Fatalf("%d turn requests reached the stand-in, want %d", turns, n)
	}
}

func sorted(v []int) []int { s := append([]int{}, v...); sort.Ints(s); return s }

// TestHostileTextIsData: unguarded text that dispatches in the TUI ("/compact",
// "!touch FILE") reaches the model verbatim through turn/start: no
// compaction request, no file.
func TestHostileTextIsData(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	file := filepath.Join(r.dir, "pwned")
	for _, text := range []string{"/compact !touch " + file, "!touch " + file, "/compact"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := time.Now()
		turn, err := r.c.StartTurn(ctx, th.ID, text)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		end, log := r.turnEnd(t0, turn.ID, 60*time.Second)
		reqs := r.api.Requests()
		last := reqs[len(reqs)-1]
		record(t, "hostile.jsonl", map[string]any{"input": text, "status": end.Status, "stand_in_kind": last.Kind, "stand_in_new_input": last.NewInput, "notifications": methods(log)})
		if last.Kind != "turn" || last.NewInput != text {
			t.Fatalf("%q: the stand-in's last request is %s with %q", text, last.Kind, last.NewInput)
		}
		if _, err := os.Stat(file); err == nil {
			t.Fatalf("%q: the file was created", text)
		}
	}
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			t.Fatal("a compaction request reached the stand-in")
		}
	}
}

// TestFailuresArriveAsTurnErrors: each HTTP outage the e2e suite injects
// (401, billing, 429, 500, 503) ends the turn at once with status failed and
// the codexErrorInfo measured on 0.171.0 (request_max_retries = 0), after an
// error notification with willRetry false.
func TestFailuresArriveAsTurnErrors(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	want := map[standinkit.Fault]string{
		standinkit.FaultAuth:        "httpConnectionFailed 401",
		standinkit.FaultBilling:     "usageLimitExceeded 0",
		standinkit.FaultRateLimit:   "responseTooManyFailedAttempts 429",
		standinkit.FaultServer:      "internalServerError 0",
		standinkit.FaultUnavailable: "httpConnectionFailed 503",
	}
	for _, f := range []standinkit.Fault{standinkit.FaultAuth, standinkit.FaultBilling, standinkit.FaultRateLimit, standinkit.FaultServer, standinkit.FaultUnavailable} {
		if err := r.api.SetFault(f); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := time.Now()
		turn, err := r.c.StartTurn(ctx, th.ID, "hello during "+string(f))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		end, log := r.turnEnd(t0, turn.ID, 60*time.Second)
		last := log[len(log)-1]
		e, _ := appserver.TurnEnd(appserver.Message{Method: last.Method, Params: last.Params})
		info, status := e.Info, e.HTTPStatus
		var msg string
		if e.Error != nil {
			msg = e.Error.Message
		}
		var errs []appserver.ErrorNote
		for _, s := range log {
			if s.Method == appserver.MethodError {
				var e appserver.ErrorNote
				json.Unmarshal(s.Params, &e)
				errs = append(errs, e)
			}
		}
		t.Logf("%s: status %s, info %q http %d, message %q, error notes %+v, in %dms", f, end.Status, info, status, msg, errs, time.Since(t0).Milliseconds())
		record(t, "failures.jsonl", map[string]any{"fault": f, "http": f.Status(), "status": end.Status, "error": end.Error, "info": info, "info_http": status, "error_notes": errs, "ms": time.Since(t0).Milliseconds()})
		if end.Status != appserver.StatusFailed || end.Error == nil {
			t.Errorf("%s: turn ended %s %+v, want failed with error info", f, end.Status, end.Error)
		} else if got := fmt.Sprint(info, " ", status); got != want[f] {
			t.Errorf("%s: error info %q, want %q", f, got, want[f])
		}
	}
	r.api.SetFault(standinkit.FaultNone)
}

// TestInterruptEndsTheTurnInterrupted: turn/interrupt during a slow reply
// ends the turn with status interrupted.
func TestInterruptEndsTheTurnInterrupted(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := r.c.StartTurn(ctx, th.ID, "take your time [standin:slow=20s]")
	if err != nil {
		t.Fatal(err)
	}
	for m := range r.c.Notifications() {
		if m.Method == "item/agentMessage/delta" {
			break
		}
	}
	t0 := time.Now()
	if err := r.c.Interrupt(ctx, th.ID, turn.ID); err != nil {
		t.Fatal(err)
	}
	answered := time.Since(t0)
	end, log := r.turnEnd(t0, turn.ID, 15*time.Second)
	t.Logf("interrupt answered in %s, turn/completed %s after it (%s); methods %v", answered, time.Duration(log[len(log)-1].At)*time.Millisecond, end.Status, methods(log))
	record(t, "interrupt.jsonl", map[string]any{"answered_ms": answered.Milliseconds(), "status": end.Status, "error": end.Error, "notifications": log})
	if end.Status != appserver.StatusInterrupted {
		t.Fatalf("turn ended %s after turn/interrupt", end.Status)
	}
}

// TestAKilledServerIsSeenAndItsThreadResumes: SIGKILL to the server ends the
// connection with an error and the server's Done; a new server on the same
// socket path (the stale symlink cleared) resumes the same thread, whose
// next turn carries the history.
func TestAKilledServerIsSeenAndItsThreadResumes(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn, err := r.c.StartTurn(ctx, th.ID, "remember the zebra")
	if err != nil {
		t.Fatal(err)
	}
	r.turnEnd(time.Now(), turn.ID, 60*time.Second)
	t0 := time.Now()
	syscall.Kill(r.srv.Pid(), syscall.SIGKILL)
	select {
	case <-r.c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end when the server was killed")
	}
	<-r.srv.Done()
	_, lerr := os.Lstat(r.sock)
	t.Logf("killed: connection ended after %s (%v), server %v; socket path left: %v", time.Since(t0), r.c.Err(), r.srv.Err(), lerr == nil)
	if r.c.Err() == nil {
		t.Fatal("no error after the server's death")
	}
	if err := r.c.Call(ctx, "thread/read", map[string]any{"threadId": th.ID}, nil); err == nil {
		t.Fatal("a call on a dead connection succeeded")
	}
	r.start()
	got, err := r.c.ResumeThread(ctx, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != th.ID {
		t.Fatalf("resumed %s, want %s", got.ID, th.ID)
	}
	turn, err = r.c.StartTurn(ctx, th.ID, "what was it?")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := r.turnEnd(time.Now(), turn.ID, 60*time.Second)
	reqs := r.api.Requests()
	last := reqs[len(reqs)-1]
	record(t, "resume.jsonl", map[string]any{"stale_socket_left": lerr == nil, "status": end.Status, "messages_sent": last.Messages, "thread": last.Thread == th.ID})
	if end.Status != appserver.StatusCompleted || last.Messages < 3 || last.Thread != th.ID {
		t.Fatalf("after resume: %s, the request carried %d messages on thread %q (want ≥3 on %s)", end.Status, last.Messages, last.Thread, th.ID)
	}
}

// TestCompactionIsATurn: thread/compact/start is answered at once; the
// compaction runs as a turn of its own (turn/started … turn/completed) with
// a summarisation request at the stand-in.
func TestCompactionIsATurn(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn, err := r.c.StartTurn(ctx, th.ID, "something to compact")
	if err != nil {
		t.Fatal(err)
	}
	r.turnEnd(time.Now(), turn.ID, 60*time.Second)
	t0 := time.Now()
	if err := r.c.Compact(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	var log []seen
	var end appserver.Turn
	for end.ID == "" {
		select {
		case m := <-r.c.Notifications():
			log = append(log, seen{At: time.Since(t0) / time.Millisecond, Method: m.Method, Params: m.Params})
			if m.Method == appserver.MethodTurnCompleted {
				var n appserver.TurnNote
				json.Unmarshal(m.Params, &n)
				end = n.Turn
			}
		case <-ctx.Done():
			t.Fatalf("no turn/completed after thread/compact/start: %v", methods(log))
		}
	}
	compacts := 0
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			compacts++
		}
	}
	t.Logf("compaction: %s in %dms, %d compact requests; methods %v", end.Status, log[len(log)-1].At, compacts, methods(log))
	record(t, "compact.jsonl", map[string]any{"status": end.Status, "compact_requests": compacts, "notifications": log})
	if end.Status != appserver.StatusCompleted || compacts != 1 {
		t.Fatalf("compaction %s, %d compact requests", end.Status, compacts)
	}
}
