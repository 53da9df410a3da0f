package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/hookwire"
)

// Gemini CLI 0.61.0 retries a model request that got a 429 or a 5xx inside
// the turn (10 attempts per model, 5 s doubling to 30 s apart) and tells no
// hook, pane line or chat file about it (measured 2026-12-05/06,
// docs/gemini.md "Retries"). Its BeforeModel hook fires once per attempt, and
// also once per model step of a turn with tool calls; the steps are told apart
// by AfterTool, which fires between two steps (the tool ran) and never between
// two attempts of one request. So the hook counts BeforeModel since the turn's
// start or the last AfterTool: the second one and every later one is a retry
// of a failed request, recorded as a RequestFailed the driver publishes as a
// provider wait, and an AfterTool after such retries ends that wait
// (RetryWentThrough) while the turn goes on. No hook carries the failed attempt's error, so its class is
// the honest guess (hookwire.ErrProviderRetrying: transient).
//
// BeforeModel's payload carries the whole request (llm_request: the
// conversation), once per attempt, and AfterTool's the tool's output: the hook
// reads neither, only the leading fields of the payload (readHead).

// attemptsFile is harness/gemini-attempts.json: the model requests of the
// current step of the current turn.
type attemptsFile struct {
	SessionID string `json:"session_id"`
	PromptID  string `json:"prompt_id,omitempty"`
	N         int    `json:"n"`
}

func (h hookRun) attemptsPath() string {
	return filepath.Join(h.s.HarnessDir(), "gemini-attempts.json")
}

// writeAttempts records the step's request count.
func (h hookRun) writeAttempts(a attemptsFile) {
	b, _ := json.Marshal(a)
	if err := fsatomic.WriteFile(h.s.TmpDir(), h.attemptsPath(), b); err != nil {
		fmt.Fprintf(h.stderr, "pantty hook: %v\n", err)
	}
}

// readAttempts is the step's request count so far in this session (zero for
// another session's or an unreadable record).
func (h hookRun) readAttempts() attemptsFile {
	var a attemptsFile
	b, err := os.ReadFile(h.attemptsPath())
	if err != nil || json.Unmarshal(b, &a) != nil || a.SessionID != h.p.SessionID {
		return attemptsFile{SessionID: h.p.SessionID}
	}
	return a
}

// newStep starts counting a turn's model requests (BeforeAgent, which knows
// the prompt).
func (h hookRun) newStep(promptID string) {
	h.writeAttempts(attemptsFile{SessionID: h.p.SessionID, PromptID: promptID})
}

// toolRan starts counting the next model step's requests (AfterTool: the
// step's request went through and a tool ran). When that request had been
// retried, the retries are over while the turn goes on: a RetryWentThrough,
// so the seat stops naming the wait. Only that AfterTool records anything.
func (h hookRun) toolRan() int {
	a := h.readAttempts()
	h.writeAttempts(attemptsFile{SessionID: h.p.SessionID, PromptID: a.PromptID})
	if a.N < 2 {
		return 0
	}
	ev := map[string]any{"hook_event_name": hookwire.EvRetryWentThrough}
	if a.PromptID != "" {
		ev["prompt_id"] = a.PromptID
	}
	return h.forward(ev, io.Discard)
}

// attempt counts one BeforeModel; from the second of a step on, the request
// before it failed and the CLI retries it: a RequestFailed for the turn.
func (h hookRun) attempt() int {
	a := h.readAttempts()
	a.N++
	h.writeAttempts(a)
	if a.N < 2 {
		return 0
	}
	ev := map[string]any{"hook_event_name": hookwire.EvRequestFailed, "error": hookwire.ErrProviderRetrying,
		"last_assistant_message": fmt.Sprintf("attempt %d of a model request (Gemini CLI names no error to its hooks; it retries a 429 or a 5xx)", a.N)}
	if a.PromptID != "" {
		ev["prompt_id"] = a.PromptID
	}
	return h.forward(ev, io.Discard)
}

// headFields are the fields Gemini CLI 0.61.0 puts first in every hook
// payload (session_id, transcript_path, cwd, hook_event_name, timestamp),
// then the event's own.
const headFields = 8

// readHead decodes the leading string fields of a hook payload and stops at
// the first value that is not a string (BeforeModel's llm_request, AfterTool's
// tool_input), so what follows is not read. It returns those fields and every
// byte taken from r, for a caller that needs the whole payload after all
// (the bytes read, then the rest of r).
func readHead(r io.Reader) (payloadFields, []byte) {
	var read bytes.Buffer
	dec := json.NewDecoder(io.TeeReader(r, &read))
	head := map[string]string{}
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for i := 0; i < headFields && dec.More(); i++ {
			k, err := dec.Token()
			if err != nil {
				break
			}
			v, err := dec.Token()
			s, ok := v.(string)
			if err != nil || !ok {
				break
			}
			head[fmt.Sprint(k)] = s
		}
	}
	return payloadFields{Event: head["hook_event_name"], SessionID: head["session_id"],
		Transcript: head["transcript_path"], Cwd: head["cwd"]}, read.Bytes()
}
