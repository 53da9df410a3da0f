package gemini

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/hookwire"
)

// cliPayload is a hook payload in Gemini CLI 0.61.0's field order (its base
// fields first, then the event's own: measured 2026-12-06), with rest as the
// event's own fields, already JSON.
func cliPayload(event, rest string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/t/chats/session.jsonl","cwd":"/w","hook_event_name":%q,"timestamp":"2026-12-06T01:44:32.875Z"%s}`,
		recorded, event, rest)
}

// TestRetriedModelRequestIsARequestFailed: a second BeforeModel within one
// model step (no AfterTool between) is the CLI retrying a failed request, and
// is recorded as RequestFailed with the attempt's number; the AfterTool after
// such a step records RetryWentThrough; the first BeforeModel of each step,
// and any other AfterTool, record nothing.
func TestRetriedModelRequestIsARequestFailed(t *testing.T) {
	s := hookSeat(t)
	run := func(payload string) []hookwire.Event {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := RunHook(s.Home, s.Name, strings.NewReader(payload), &out, &errOut); code != 0 || out.Len() != 0 {
			t.Fatalf("RunHook exit %d, printed %q: %s", code, out.String(), errOut.String())
		}
		names, err := s.PendingEvents()
		if err != nil {
			t.Fatal(err)
		}
		var evs []hookwire.Event
		for _, n := range names {
			ev, err := hookwire.ReadEvent(s.EventsDir() + "/" + n)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
			if err := s.MarkSeen(n); err != nil {
				t.Fatal(err)
			}
		}
		return evs
	}
	const prompt = "[pantty:m1] hello"
	model := cliPayload("BeforeModel", `,"llm_request":{"model":"gemini-3.8-flash","messages":[{"role":"user","content":"hello"}]}`)
	tool := cliPayload("AfterTool", `,"tool_name":"run_shell_command","tool_input":{"command":"echo hi"},"tool_response":{"llmContent":"hi"}`)
	if evs := run(cliPayload("BeforeAgent", `,"prompt":"`+prompt+`"`)); kinds(evs) != hookwire.EvUserPromptSubmit {
		t.Fatalf("BeforeAgent recorded %q", kinds(evs))
	}
	steps := []struct {
		payload string
		attempt int // the RequestFailed's attempt, 0 for none, -1 for a RetryWentThrough
	}{
		{model, 0}, {tool, 0}, {model, 0}, {model, 2}, {model, 3}, {tool, -1}, {tool, 0}, {model, 0}, {model, 2},
	}
	for i, st := range steps {
		evs := run(st.payload)
		if st.attempt < 0 {
			if len(evs) != 1 || evs[0].Kind != hookwire.EvRetryWentThrough || evs[0].Fields.PromptID != promptID(recorded, prompt) {
				t.Fatalf("step %d: recorded %q, want one RetryWentThrough for the turn", i, kinds(evs))
			}
			continue
		}
		if st.attempt == 0 {
			if len(evs) != 0 {
				t.Fatalf("step %d: recorded %q, want nothing", i, kinds(evs))
			}
			continue
		}
		if len(evs) != 1 || evs[0].Kind != hookwire.EvRequestFailed {
			t.Fatalf("step %d: recorded %q, want one RequestFailed", i, kinds(evs))
		}
		f := evs[0].Fields
		want := fmt.Sprintf("attempt %d ", st.attempt)
		if f.Error != hookwire.ErrProviderRetrying || !strings.HasPrefix(f.LastAssistantMessage, want) ||
			f.SessionID != recorded || f.PromptID != promptID(recorded, prompt) {
			t.Fatalf("step %d: %+v, want error %s, %q…, the turn's prompt id", i, f, hookwire.ErrProviderRetrying, want)
		}
	}
	// A new turn starts a new count.
	run(cliPayload("BeforeAgent", `,"prompt":"[pantty:m2] again"`))
	if evs := run(model); len(evs) != 0 {
		t.Fatalf("the new turn's first request recorded %q", kinds(evs))
	}
}

// countingReader counts what was read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestBeforeModelReadsNotTheConversation: the hook takes BeforeModel's
// leading fields and leaves its llm_request — the whole conversation, sent
// once per request — unread.
func TestBeforeModelReadsNotTheConversation(t *testing.T) {
	s := hookSeat(t)
	big := strings.Repeat("x", 8<<20)
	r := &countingReader{r: strings.NewReader(cliPayload("BeforeModel", `,"llm_request":{"messages":[{"role":"user","content":"`+big+`"}]}`))}
	var out, errOut bytes.Buffer
	if code := RunHook(s.Home, s.Name, r, &out, &errOut); code != 0 {
		t.Fatalf("RunHook exit %d: %s", code, errOut.String())
	}
	if r.n > 64<<10 {
		t.Fatalf("the hook read %d bytes of an %d-byte payload", r.n, len(big))
	}
}
