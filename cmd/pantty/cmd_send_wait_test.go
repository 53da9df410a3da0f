package main

// `seat send --wait` and `seat show` against a real seat: the simulator in a
// private tmux server, driven by the real pantty binary. The reply a script
// gets is compared with what the simulated model wrote in its own transcript.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// modelReplies reads the assistant messages from the simulator's transcripts
// (the harness's record, not pantty's), in the order they were written.
func modelReplies(t *testing.T, h *seattest.Harness) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.Seat().HarnessDir(), "sessions", "*.jsonl"))
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var row struct {
				Type    string `json:"type"`
				Message struct {
					Content json.RawMessage `json:"content"`
				} `json:"message"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil || row.Type != "assistant" {
				continue
			}
			var blocks []struct{ Text string }
			if json.Unmarshal(row.Message.Content, &blocks) == nil {
				var b strings.Builder
				for _, x := range blocks {
					b.WriteString(x.Text)
				}
				out = append(out, b.String())
			}
		}
	}
	return out
}

// decodeStrict decodes one JSON value into v and fails on a field v does not
// declare: the test's types are the documented schema (docs/cli.md).
func decodeStrict(t *testing.T, line string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%q does not match the documented schema: %v", line, err)
	}
}

// wantResult is the result line of docs/cli.md, schema v1.
type wantResult struct {
	V              int        `json:"v"`
	Seat           string     `json:"seat"`
	ID             string     `json:"id"`
	State          string     `json:"state"`
	Reason         string     `json:"reason"`
	Detail         string     `json:"detail"`
	Reply          string     `json:"reply"`
	ReplyBytes     int        `json:"reply_bytes"`
	ReplyTruncated bool       `json:"reply_truncated"`
	TimedOut       bool       `json:"timed_out"`
	Unknown        string     `json:"unknown"`
	SubmittedAt    *time.Time `json:"submitted_at"`
	EndedAt        *time.Time `json:"ended_at"`
}

// wantShown is `seat show --json` of docs/cli.md, schema v1.
type wantShown struct {
	V                                    int
	Seat, ID, From, Board, Channel, Text string
	Transport                            string
	State, Reason, Detail                string
	EnqueuedAt                           time.Time  `json:"enqueued_at"`
	Submitted                            *time.Time `json:"submitted_at"`
	Ended                                *time.Time `json:"ended_at"`
	Updated                              *time.Time `json:"updated_at"`
	NotBefore                            *time.Time `json:"not_before"`
	Attempts, Resubmits, Retries         int
	Evidence                             struct {
		Submission, Nonce string
		TurnEnd           string `json:"turn_end"`
		PromptID          string `json:"prompt_id"`
		SessionID         string `json:"session_id"`
	}
	Submissions []struct {
		Attempt, Resubmit, Bytes, Mentions int
		SentAt                             time.Time `json:"sent_at"`
		SHA256, Nonce, Artifact            string
	}
	Reply struct {
		Text, File string
		Bytes      int
		Truncated  bool
	}
}

func TestSendWaitPrintsTheWholeReply(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "answers")
	h.Start()

	// The documented use: reply=$(echo "…" | pantty seat send NAME --wait)
	r := h.RunStdin("review PR 42", "seat", "send", h.Name, "--wait", "--timeout", "60s")
	replies := modelReplies(t, h)
	if r.Code != 0 || len(replies) != 1 || r.Stdout != replies[0]+"\n" {
		t.Fatalf("send --wait: want exit 0 and the model's reply %q on stdout; got %s", replies, r)
	}

	// A reply far over the old 1 KiB status preview comes back whole.
	const long = 5000
	r = h.RunStdin("write a long review [sim:reply-bytes=5000]", "seat", "send", h.Name, "--id", "long-1", "--wait", "--timeout", "60s")
	replies = modelReplies(t, h)
	if r.Code != 0 || len(replies) != 2 || len(replies[1]) != long || r.Stdout != replies[1]+"\n" {
		t.Fatalf("long reply: want exit 0 and the model's %d-byte reply; got exit %d, %d bytes on stdout (stderr %q)", long, r.Code, len(r.Stdout), r.Stderr)
	}
	if st := h.Status("long-1"); st.ReplyBytes != long || len(st.Reply) > 1100 {
		t.Fatalf("status keeps reply_bytes %d (want %d) and a preview of %d bytes", st.ReplyBytes, long, len(st.Reply))
	}
	if b, err := os.ReadFile(h.Seat().ReplyPath("long-1")); err != nil || string(b) != replies[1] {
		t.Fatalf("inbox/replies/long-1.txt: %v, %d bytes", err, len(b))
	}

	// seat show: the message, its steps with times, the evidence and the reply.
	r = h.Run("seat", "show", h.Name, "long-1", "--json")
	if r.Code != 0 {
		t.Fatalf("seat show --json: %s", r)
	}
	var m wantShown
	decodeStrict(t, r.Stdout, &m)
	switch {
	case m.V != 1 || m.ID != "long-1" || m.Seat != h.Name || m.State != inbox.StateProcessed:
		t.Fatalf("seat show: %+v", m)
	case m.Reply.Text != replies[1] || m.Reply.Bytes != long || m.Reply.Truncated || m.Reply.File != "inbox/replies/long-1.txt":
		t.Fatalf("seat show reply: %d bytes, %+v", len(m.Reply.Text), m.Reply.Bytes)
	case m.Submitted == nil || m.Ended == nil || m.Submitted.Before(m.EnqueuedAt) || m.Ended.Before(*m.Submitted):
		t.Fatalf("seat show times out of order: enqueued %v submitted %v ended %v", m.EnqueuedAt, m.Submitted, m.Ended)
	case m.Evidence.Submission == "" || m.Evidence.TurnEnd == "" || m.Evidence.PromptID == "":
		t.Fatalf("seat show evidence: %+v", m.Evidence)
	case len(m.Submissions) != 1 || m.Submissions[0].Artifact != "artifacts/long-1.1.toml" || m.Submissions[0].Nonce != m.Evidence.Nonce:
		t.Fatalf("seat show submissions: %+v", m.Submissions)
	}
	r = h.Run("seat", "show", h.Name, "long-1")
	if !regexp.MustCompile(`(?m)^state\s+processed$`).MatchString(r.Stdout) {
		t.Fatalf("seat show: no state line saying processed in\n%s", r)
	}
	for _, want := range []string{"queued", "pasted (attempt 1)", "submitted", m.Evidence.TurnEnd, "line 000001 of the long reply"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("seat show: %q missing from\n%s", want, r)
		}
	}
	if r := h.Run("seat", "show", h.Name, "no-such-id"); r.Code != exitNotFound || !strings.Contains(r.Stderr, "no message") {
		t.Fatalf("seat show of an unknown id: want exit %d, got %s", exitNotFound, r)
	}
}

func TestSendWaitFailedExits1WithTheReason(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "fails", seattest.TOML(`turn_ceiling = "2s"`))
	h.Start()
	r := h.RunStdin("this never ends [sim:hang]", "seat", "send", h.Name, "--id", "stuck", "--wait", "--timeout", "60s")
	if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "message stuck failed (ceiling") {
		t.Fatalf("a failed message: want exit 1, nothing on stdout, the reason on stderr; got %s", r)
	}
	if st := h.Status("stuck"); st.State != inbox.StateFailed {
		t.Fatalf("status: %+v", st)
	}
}

func TestSendWaitTimeoutLeavesTheMessageQueued(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "idle") // never started: nothing will process it
	r := h.RunStdin("anyone there?", "seat", "send", h.Name, "--id", "w1", "--wait", "--timeout", "300ms")
	last := strings.TrimSpace(r.Stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if r.Code != 4 || r.Stdout != "" || !strings.Contains(last, "message w1 still queued") || !strings.Contains(r.Stderr, "no live driver") {
		t.Fatalf("timeout: want exit 4, the id on stderr, nothing on stdout; got %s", r)
	}
	if st := h.Status("w1"); st.State != inbox.StateQueued {
		t.Fatalf("after the timeout the message is %s, want queued", st.State)
	}
	if _, err := h.Seat().ReadStored("w1"); err != nil {
		t.Fatalf("the message left the inbox: %v", err)
	}
	// Waiting again with the same id is a duplicate send that waits: once the
	// seat runs, the same command returns the reply.
	h.Start()
	r = h.RunStdin("anyone there?", "seat", "send", h.Name, "--id", "w1", "--wait", "--timeout", "60s", "--json")
	var res wantResult
	decodeStrict(t, r.Stdout, &res)
	if r.Code != 0 || res.V != 1 || res.ID != "w1" || res.State != inbox.StateProcessed || !strings.HasPrefix(res.Reply, "sim: received") ||
		res.ReplyBytes != len(res.Reply) || res.SubmittedAt == nil || res.EndedAt == nil {
		t.Fatalf("second wait: %s\n%+v", r, res)
	}
	if r := h.RunStdin("x", "seat", "send", h.Name, "--timeout", "1s"); r.Code != 2 {
		t.Fatalf("--timeout without --wait: want exit 2, got %s", r)
	}
}

func TestSendWaitStreamPrintsOneResultPerMessage(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "stream", seattest.TOML(`turn_ceiling = "2s"`))
	h.Start()
	in := strings.Join([]string{
		`{"id":"s1","text":"first"}`,
		`{"id":"s2","text":"second [sim:hang]"}`,
		`{"id":"s1","text":"first again"}`, // the same id: one result for it
		`not json`,                         // refused: no result line, exit 2 at the end
		`{"id":"s3","text":"third"}`,
	}, "\n") + "\n"
	r := h.RunStdin(in, "seat", "send", h.Name, "--jsonl", "--wait", "--timeout", "60s")
	if r.Code != 2 || !strings.Contains(r.Stderr, "line 4 refused") {
		t.Fatalf("want exit 2 for the refused line; got %s", r)
	}
	got := map[string]wantResult{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var res wantResult
		decodeStrict(t, line, &res)
		if _, dup := got[res.ID]; dup {
			t.Fatalf("two result lines for %s:\n%s", res.ID, r.Stdout)
		}
		got[res.ID] = res
	}
	if len(got) != 3 || got["s1"].State != inbox.StateProcessed || got["s2"].State != inbox.StateFailed || got["s2"].Reason != inbox.ReasonCeiling ||
		got["s3"].State != inbox.StateProcessed || !strings.Contains(got["s3"].Reply, "sim: received") {
		t.Fatalf("results: %+v", got)
	}
	// --lines, all processed: exit 0, each line's reply is the model's.
	r = h.RunStdin("alpha\nbeta\n", "seat", "send", h.Name, "--lines", "--wait", "--timeout", "60s")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != 0 || len(lines) != 2 {
		t.Fatalf("--lines --wait: %s", r)
	}
	replies := modelReplies(t, h)
	for _, l := range lines {
		var res wantResult
		decodeStrict(t, l, &res)
		if res.State != inbox.StateProcessed || !slices.Contains(replies, res.Reply) {
			t.Fatalf("--lines result %+v is not one of the model's replies", res)
		}
	}
}
