package main

// `pantty events` against two real seats in one state root: concurrent senders,
// a driver restart, and a resume from a cursor. The stream is checked against
// the inboxes message by message, and the inboxes against what reached the
// simulated model.

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// wantEvent is an event line of docs/cli.md, schema v1.
type wantEvent struct {
	V                                  int
	Cursor                             string
	At                                 time.Time
	Seat, Type, ID, From, State, Epoch string
	Reason, Detail                     string
	Mode, Want, By, Why                string
	Verdict, Cause                     string
	Snapshot, Late                     bool
}

// follower is a running `pantty events` process and the lines it printed.
type follower struct {
	cmd   *exec.Cmd
	lines chan wantEvent
}

func startEvents(t *testing.T, h *seattest.Harness, args ...string) *follower {
	t.Helper()
	cmd := exec.Command(h.Bin, append([]string{"events"}, args...)...)
	cmd.Env = h.Env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &follower{cmd: cmd, lines: make(chan wantEvent, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e wantEvent
			decodeStrict(t, sc.Text(), &e)
			f.lines <- e
		}
		close(f.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return f
}

// until collects lines until done says the collection is complete.
func (f *follower) until(t *testing.T, what string, got *[]wantEvent, done func([]wantEvent) bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for !done(*got) {
		select {
		case e, ok := <-f.lines:
			if !ok {
				t.Fatalf("events exited before %s; got %d lines", what, len(*got))
			}
			*got = append(*got, e)
		case <-deadline:
			t.Fatalf("no %s after 60s; got %d lines", what, len(*got))
		}
	}
}

// finals counts the message ids that have a final event.
func finals(es []wantEvent) map[string]bool {
	m := map[string]bool{}
	for _, e := range es {
		if e.Type == "message" && inbox.Final(e.State) {
			m[e.Seat+"/"+e.ID] = true
		}
	}
	return m
}

func TestEventsFollowMatchesTheInboxes(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ea")
	other, err := state.Open(h.Home, "eb")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(other, "sim", h.Work, seattest.FastSim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Run("seat", "stop", "eb") }) // before h's own cleanup kills the server
	h.Start()
	if r := h.Run("seat", "start", "eb"); r.Code != 0 {
		t.Fatalf("start eb: %s", r)
	}
	f := startEvents(t, h, "--follow", "--settle", "200ms")

	// Concurrent senders into both seats.
	var jobs []seattest.Job
	want := map[string][]string{} // seat → ids
	for j := range 6 {
		name := []string{"ea", "eb"}[j%2]
		var in strings.Builder
		for k := range 3 {
			id := fmt.Sprintf("c%d-%d", j, k)
			want[name] = append(want[name], id)
			fmt.Fprintf(&in, `{"id":%q,"text":"message %s"}`+"\n", id, id)
		}
		jobs = append(jobs, seattest.Job{Stdin: in.String(), Args: []string{"seat", "send", name, "--jsonl"}})
	}
	for i, r := range h.RunConcurrently(jobs) {
		if r.Code != 0 {
			t.Fatalf("sender %d: %s", i, r)
		}
	}
	// A driver restart in the middle: two messages wait while ea is stopped.
	// (Stopped between turns: a stop during a turn resubmits that message,
	// which reaches the model twice; the events then show "resubmitted".)
	h.WaitFinal(60*time.Second, want["ea"]...)
	if r := h.Run("seat", "stop", "ea"); r.Code != 0 {
		t.Fatalf("stop: %s", r)
	}
	h.Send("during-stop-1", "sent while stopped")
	h.Send("during-stop-2", "also sent while stopped")
	want["ea"] = append(want["ea"], "during-stop-1", "during-stop-2")
	h.Start()
	h.WaitFinal(60*time.Second, want["ea"]...)

	var got []wantEvent
	total := len(want["ea"]) + len(want["eb"])
	f.until(t, "a final event for every message", &got, func(es []wantEvent) bool { return len(finals(es)) == total })
	f.cmd.Process.Kill()
	checkAgainstInboxes(t, h, got)
	intents := []string{}
	for _, e := range got {
		if e.Type == "intent" && e.Seat == "ea" {
			intents = append(intents, e.Want)
		}
	}
	if !strings.HasSuffix(strings.Join(intents, ","), "stopped,running") {
		t.Errorf("ea's intent events: %v, want the stop and the start", intents)
	}
	for id, n := range h.ModelTurns() {
		if n != 1 {
			t.Errorf("message %s reached the model %d times", id, n)
		}
	}

	// Resume from the last cursor: the new messages' events and nothing before.
	last := ""
	for _, e := range got {
		if e.Cursor != "" && !e.Late {
			last = e.Cursor // lines come in cursor order; a late one is out of it
		}
	}
	for _, id := range []string{"after-1", "after-2"} {
		if r := h.RunStdin("later work", "seat", "send", "eb", "--id", id); r.Code != 0 {
			t.Fatal(r)
		}
	}
	g := startEvents(t, h, "--follow", "--settle", "200ms", "--since", last)
	var again []wantEvent
	g.until(t, "the resumed stream's finals", &again, func(es []wantEvent) bool { return len(finals(es)) == 2 })
	seen := map[string]bool{}
	for _, e := range got {
		seen[e.Cursor] = true
	}
	for _, e := range again {
		if e.Type == "health" {
			continue
		}
		if seen[e.Cursor] {
			t.Errorf("the resumed stream repeated %s", e.Cursor)
		}
		if e.Type != "message" || !strings.HasPrefix(e.ID, "after-") {
			t.Errorf("the resumed stream printed %+v, which happened before its cursor", e)
		}
	}
	all := append(got, again...)
	checkAgainstInboxes(t, h, all)
}

// checkAgainstInboxes requires, for every final message in both inboxes,
// exactly one event per state it went through, in order (queued, submitted,
// and its final state; a resubmission adds resubmitted and its own submitted),
// and no event for a message the inboxes do not hold.
func checkAgainstInboxes(t *testing.T, h *seattest.Harness, es []wantEvent) {
	t.Helper()
	type key struct{ seat, id string }
	seq := map[key][]string{}
	cursors := map[string]bool{}
	for _, e := range es {
		if e.Type != "message" {
			continue
		}
		if cursors[e.Cursor] {
			t.Errorf("event %s printed twice", e.Cursor)
		}
		cursors[e.Cursor] = true
		seq[key{e.Seat, e.ID}] = append(seq[key{e.Seat, e.ID}], e.State)
	}
	n := 0
	for _, name := range []string{"ea", "eb"} {
		s, _ := state.Open(h.Home, name)
		entries, err := s.Entries()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !inbox.Final(e.Status.State) {
				continue // the resumed stream's own messages, checked by the caller
			}
			n++
			want := "queued,submitted," + e.Status.State
			if e.Status.Resubmits > 0 {
				want = "queued,submitted,resubmitted,submitted," + e.Status.State
			}
			if got := strings.Join(seq[key{name, e.Msg.ID}], ","); got != want {
				t.Errorf("%s/%s: events %q, want %s", name, e.Msg.ID, got, want)
			}
		}
	}
	if len(seq) != n {
		t.Errorf("events name %d messages, the inboxes hold %d final ones", len(seq), n)
	}
}
