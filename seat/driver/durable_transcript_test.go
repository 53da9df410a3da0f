package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// breakWrites makes every state write of the seat fail as on a full disk:
// each one starts as a temp file in tmp/, and tmp/ becomes a file (chmod
// would not stop root, who runs CI). mend puts the directory back.
func breakWrites(t *testing.T, d *Driver) (mend func()) {
	t.Helper()
	return breakDir(t, d.S.TmpDir())
}

// breakDir makes dir a file until mend: every write into it fails.
func breakDir(t *testing.T, tmp string) (mend func()) {
	t.Helper()
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := os.Remove(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(tmp, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoKeyBeforeItsRecordIsDurable pins write-ahead at the board door:
// with the state unwritable, a queued message gets no key at all (not even
// the clear), its status stays queued on disk, and the seat says why; once
// the driver's retry writes again, the same message goes out, once.
func TestNoKeyBeforeItsRecordIsDurable(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "m1", "fix the build")
	mend := breakWrites(t, d)
	submitNow(t, d)
	if acts := pane.did(); len(acts) != 0 {
		t.Fatalf("keys went to the pane with no durable record: %q", acts)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateQueued || st.Attempts != 0 {
		t.Fatalf("on disk after the refused delivery: %+v", st)
	}
	if d.phase != machine.Held || !strings.HasPrefix(d.waiting, "state not writable: ") || d.unwritten.retryT.C() == nil {
		t.Fatalf("phase %s (%q), retry armed %v: want held, the cause named, a retry armed", d.phase, d.waiting, d.unwritten.retryT.C() != nil)
	}
	since := d.unwritten.since
	d.flushState() // still broken: stays held, the same fault (not a new one every second)
	if !d.unwritten.since.Equal(since) || !d.unwritten.faulty() || d.unwritten.retryT.C() == nil {
		t.Fatalf("a failed retry began a new fault (since %v → %v) or armed no retry", since, d.unwritten.since)
	}
	submitNow(t, d)
	if acts := pane.did(); len(acts) != 0 || d.phase != machine.Held {
		t.Fatalf("after a failed retry: actions %q, phase %s", acts, d.phase)
	}

	mend()
	d.flushState()
	if d.unwritten.faulty() || d.phase != machine.Idle {
		t.Fatalf("after the state is writable again: fault %v, phase %s", d.unwritten.err, d.phase)
	}
	submitNow(t, d)
	acts := pane.did()
	if len(acts) != 2 || !strings.HasPrefix(acts[0], "paste ") {
		t.Fatalf("pane actions once writable: %q, want one paste, Enter (the box is empty: no C-u)", acts)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitting || st.Attempts != 1 {
		t.Fatalf("on disk after the delivery: %+v", st)
	}
}

// TestACloseIsReportedOnlyOnceDurable pins the other half: a turn that ends
// while its final status cannot be written (inbox/processed/ broken; the
// cursor and the heartbeat still could be) is processed in memory only; the
// cursor and the status on disk do not claim it, the queue holds (the next
// message gets no key), and the retry writes status then cursor.
func TestACloseIsReportedOnlyOnceDurable(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "m1", "fix the build")
	queue(t, d, "m2", "then the docs")
	submitNow(t, d)
	pasted := strings.TrimPrefix(pane.did()[0], "paste ")
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvUserPromptSubmit, ReceivedAt: time.Now(), File: "events/e1.json",
		Fields: hookwire.HookFields{SessionID: d.sess.ID, Prompt: pasted, PromptID: "p1"}})

	mend := breakDir(t, d.S.ProcessedDir())
	d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(), File: "events/e2.json",
		Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p1", LastAssistantMessage: "built"}})
	submitNow(t, d)
	// (read from status/ itself: a reader of all three directories would
	// trip over the broken processed/)
	if b, err := os.ReadFile(filepath.Join(d.S.StatusDir(), "m1.toml")); err != nil || !strings.Contains(string(b), `state = "submitted"`) {
		t.Fatalf("m1 on disk while its close is not durable: %s (%v)", b, err)
	}
	if _, err := d.S.CursorFile().Read(); err == nil {
		t.Fatal("a cursor was written while m1's close is not durable")
	}
	if n := len(pane.did()); n != 2 {
		t.Fatalf("m2 got keys while m1's close is pending: %q", pane.did()[2:])
	}

	mend()
	d.flushState()
	st := status(t, d, "m1")
	if st.State != inbox.StateProcessed || st.TurnEnd != "events/e2.json" {
		t.Fatalf("m1 after the retry: %+v", st)
	}
	if rep, err := d.S.ReadReply(st); err != nil || rep.Text != "built" {
		t.Fatalf("m1's reply after the retry: %q, %v", rep.Text, err)
	}
	if c, err := d.S.CursorFile().Read(); err != nil || c.ID != "m1" {
		t.Fatalf("cursor after the retry: %+v, %v", c, err)
	}
	submitNow(t, d)
	if acts := pane.did(); len(acts) != 4 {
		t.Fatalf("m2 not delivered once the state is durable: %q", acts)
	}
	if id, _, _, ok := guard.MatchHeader(strings.TrimPrefix(pane.did()[2], "paste ")); !ok || id != "m2" {
		t.Fatalf("the next paste is not m2: %q", pane.did()[2])
	}
}

// TestAReplyGetsAFileOnlyWhenItIsLongerThanItsPreview: a reply that fits the
// status's preview is stored there alone (a file per message cost a page of
// disk each for nothing), a file an earlier attempt left is removed with it
// (or a reader would take it for this turn's), and a long reply still gets
// its file, read back whole.
func TestAReplyGetsAFileOnlyWhenItIsLongerThanItsPreview(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	queue(t, d, "short", "answer in a word")
	queue(t, d, "long", "answer at length")
	if err := os.MkdirAll(d.S.RepliesDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.S.ReplyPath("short"), []byte("an earlier attempt's long reply"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a long answer. ", 200) // 3000 bytes: over state.MaxReply
	for _, c := range []struct{ id, reply string }{{"short", "yes"}, {"long", long}} {
		deliverAndTake(t, d, pane, "p-"+c.id)
		d.onHookEvent(hookwire.Event{Kind: hookwire.EvStop, ReceivedAt: time.Now(), File: "events/" + c.id + ".json",
			Fields: hookwire.HookFields{SessionID: d.sess.ID, PromptID: "p-" + c.id, LastAssistantMessage: c.reply}})
		st := status(t, d, c.id)
		rep, err := d.S.ReadReply(st)
		if err != nil || rep.Text != c.reply || rep.Truncated {
			t.Fatalf("%s: reply %q (truncated %v), %v; want it whole", c.id, rep.Text, rep.Truncated, err)
		}
		_, ferr := os.Stat(d.S.ReplyPath(c.id))
		if hasFile := ferr == nil; hasFile != (len(c.reply) > state.MaxReply) {
			t.Fatalf("%s: reply file present %v for a %d-byte reply", c.id, hasFile, len(c.reply))
		}
	}
}

// TestOnlyTheNewestReadingStaysInSeen: status lines come with every turn and
// the next one supersedes the last; consumed, only the newest of each kind
// stays in events/seen/, while evidence events all stay.
func TestOnlyTheNewestReadingStaysInSeen(t *testing.T) {
	t.Parallel()
	d, _ := idleDriver(t)
	now := time.Now()
	line := []byte(`{"session_id":"` + d.sess.ID + `","context_window":{"context_window_size":200000,"current_usage":{"input_tokens":100}}}`)
	var names []string
	for i := 0; i < 3; i++ {
		n, err := d.S.WriteEvent(hookwire.EvStatusLine, line, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
		if _, err = d.S.WriteEvent(hookwire.EvSessionEnd, []byte(`{"session_id":"x"}`), now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		d.drainEvents()
	}
	seen, err := d.S.SeenEvents()
	if err != nil {
		t.Fatal(err)
	}
	lines, others := 0, 0
	for _, n := range seen {
		if strings.HasSuffix(n, "-"+hookwire.EvStatusLine+".json") {
			lines++
			if n != filepath.Base(names[2]) {
				t.Errorf("kept %s, want the newest status line %s", n, names[2])
			}
		} else {
			others++
		}
	}
	if lines != 1 || others != 3 {
		t.Fatalf("events/seen holds %d status lines and %d other events, want 1 and 3: %q", lines, others, seen)
	}
}
