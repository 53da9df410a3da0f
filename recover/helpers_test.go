package recover_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// wait bounds every wait for an event: generous, because the package's tests
// share two cores with other packages' tests in CI.
const wait = 40 * time.Second

// fast are the seat.toml lines of every recovery test seat: a 1s heartbeat (so
// a wedged loop is stale in 3s), a short ready timeout and backoff.
var fast = []string{`heartbeat_interval = "1s"`, `ready_timeout = "3s"`}

// newSeat makes a simulated seat with the fast timings; extra lines go after
// them (top-level keys first, then tables).
func newSeat(t *testing.T, name string, extra ...string) *seattest.Harness {
	t.Helper()
	return seattest.New(t, name, seattest.TOML(append(append([]string{}, fast...), extra...)...))
}

// sibling makes a second seat in h's state root, on h's tmux socket, with its
// own workdir, and stops it at cleanup.
func sibling(t *testing.T, h *seattest.Harness, name string, extra ...string) *seattest.Harness {
	t.Helper()
	return siblingEnv(t, h, name, seattest.FastSim, extra...)
}

// siblingEnv is sibling with the simulator's environment given.
func siblingEnv(t *testing.T, h *seattest.Harness, name string, env map[string]string, extra ...string) *seattest.Harness {
	t.Helper()
	h2 := &seattest.Harness{T: t, Name: name, Home: h.Home, Socket: h.Socket, Work: filepath.Join(filepath.Dir(h.Work), "work-"+name), Bin: h.Bin}
	if err := os.MkdirAll(h2.Work, 0o700); err != nil {
		t.Fatal(err)
	}
	s := h2.Seat()
	if err := seat.InitConfig(s, "sim", h2.Work, env); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.ConfigPath())
	lines := append(append([]string{}, fast...), extra...)
	text := strings.Replace(string(data), "[tmux]", strings.Join(lines, "\n")+"\n\n[tmux]", 1)
	if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, live, _ := s.LiveOwner(); live {
			h2.Run("seat", "stop", name)
		}
		if sess, err := s.SessionFile().Read(); err == nil {
			proc.KillGroup(sess.PanePID)
		}
	})
	return h2
}

// sweep runs `pantty recover --json` once and returns its report.
func sweep(t *testing.T, h *seattest.Harness, args ...string) (recover.Report, seattest.Result) {
	t.Helper()
	r := h.Run(append([]string{"recover", "--json"}, args...)...)
	var rep recover.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("recover --json: not a report (%v): %s", err, r)
	}
	if r.Code != rep.Code {
		t.Fatalf("recover exited %d but its report says %d: %s", r.Code, rep.Code, r)
	}
	return rep, r
}

// seatIn returns the named seat's line of a report.
func seatIn(t *testing.T, rep recover.Report, name string) recover.SeatReport {
	t.Helper()
	for _, s := range rep.Seats {
		if s.Seat == name {
			return s
		}
	}
	t.Fatalf("seat %s is not in the report: %+v", name, rep)
	return recover.SeatReport{}
}

// sweepUntil runs recover (as cron would, but without waiting a minute) until
// done says the seat's report is what the test waits for; between runs it waits
// a short tick. It returns every
// report of the seat, in order.
func sweepUntil(t *testing.T, h *seattest.Harness, what string, done func(recover.SeatReport) bool) []recover.SeatReport {
	t.Helper()
	deadline := time.Now().Add(wait)
	var seen []recover.SeatReport
	for {
		rep, _ := sweep(t, h)
		sr := seatIn(t, rep, h.Name)
		seen = append(seen, sr)
		if done(sr) {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s of sweeps, still not %s; reports:\n%s\ndriver.log:\n%s", wait, what, describe(seen), h.DriverLog())
		}
		// The scheduler's tick, shortened: each sweep writes health.toml, so
		// waiting on the seat's file events would only wake on our own writes.
		time.Sleep(250 * time.Millisecond)
	}
}

// describe lists reports for a failure message: every report that is not a
// plain ok, and how many plain oks came between.
func describe(rs []recover.SeatReport) string {
	var b strings.Builder
	oks := 0
	for i, r := range rs {
		if r.Verdict == recover.OK && r.Action == "" {
			oks++
			continue
		}
		if oks > 0 {
			fmt.Fprintf(&b, "  (%d ok)\n", oks)
			oks = 0
		}
		fmt.Fprintf(&b, "  %d: %s %s: %s | action: %s | result: %s\n", i, r.Verdict, r.Cause, r.Reason, r.Action, r.Result)
	}
	if oks > 0 {
		fmt.Fprintf(&b, "  (%d ok)\n", oks)
	}
	return b.String()
}

func okVerdict(r recover.SeatReport) bool { return r.Verdict == recover.OK }

// causes lists the distinct causes in reports.
func causes(rs []recover.SeatReport) map[string]bool {
	m := map[string]bool{}
	for _, r := range rs {
		if r.Cause != "" {
			m[r.Cause] = true
		}
	}
	return m
}

// replies counts, per message id, the model turns that ended with a reply in
// the simulator's own transcripts (a user row carrying the guard header, then
// an assistant row of the same prompt that is not an API error). This is what
// reached the model and came back, counted from the harness's records, never
// from pantty's.
func replies(t *testing.T, h *seattest.Harness) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.Seat().HarnessDir(), "sessions", "*.jsonl"))
	n := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		prompts := map[string]string{}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var row struct {
				Type     string `json:"type"`
				PromptID string `json:"promptId"`
				APIError bool   `json:"isApiErrorMessage"`
				Message  struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(sc.Bytes(), &row) != nil {
				continue
			}
			switch row.Type {
			case "user":
				var text string
				if json.Unmarshal(row.Message.Content, &text) == nil {
					if id, _, _, ok := guard.MatchHeader(text); ok {
						prompts[row.PromptID] = id
					}
				}
			case "assistant":
				if id, ok := prompts[row.PromptID]; ok && !row.APIError {
					n[id]++
				}
			}
		}
		fh.Close()
	}
	return n
}

// exactlyOnce asserts that every message in ids (all the board messages sent,
// in order) was processed by exactly one model turn that replied, that at most
// one more (marked) resubmission reached the model for a turn lost in a crash,
// and that the cursor closed all of them in order.
func exactlyOnce(t *testing.T, h *seattest.Harness, ids ...string) {
	t.Helper()
	h.WaitFinal(wait, ids...)
	rep := replies(t, h)
	turns := h.ModelTurns()
	resub := map[string]int{}
	for _, r := range h.Requests() {
		if r.Kind == "turn" && r.Resubmit() {
			resub[r.MsgID()]++
		}
	}
	for _, id := range ids {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			t.Errorf("message %s is %s (%s %s), want processed", id, st.State, st.Reason, st.Detail)
		}
		if rep[id] != 1 {
			t.Errorf("message %s got %d model replies, want exactly 1", id, rep[id])
		}
		if turns[id] < 1 || turns[id] > 1+resub[id] || resub[id] > 1 {
			t.Errorf("message %s reached the model %d times (%d marked resubmissions)", id, turns[id], resub[id])
		}
	}
	// The cursor is written right after the last status: wait for it.
	last := ids[len(ids)-1]
	h.WaitFor("the cursor at "+last, wait, func() bool {
		c, err := h.Seat().CursorFile().Read()
		return err == nil && c.ID == last && c.Closed == len(ids)
	})
}

// killOnCleanup makes sure a process the test stopped (SIGSTOP) never
// outlives it, if recovery did not kill it.
func killOnCleanup(t *testing.T, pid int) {
	start, err := procid.Start(pid)
	if err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	t.Cleanup(func() {
		if procid.Alive(pid, start) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// alive reports whether pid runs (not a zombie).
func alive(pid int) bool {
	_, err := procid.Start(pid)
	return err == nil
}

// snapshot returns every regular file under dir with its content and mtime,
// except the ones skip names (relative paths or base names).
func snapshot(t *testing.T, dir string, skip func(rel string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !fi.Mode().IsRegular() || skip(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%s %s", fi.ModTime().Format(time.RFC3339Nano), b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diff(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	sort.Strings(d)
	return d
}

// writeScript writes an executable shell script under the test's directory.
func writeScript(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(tmuxtest.Dir(t), name)
	if err := tmuxtest.WriteExecutable(p, []byte("#!/bin/sh\n"+body)); err != nil {
		t.Fatal(err)
	}
	return p
}
