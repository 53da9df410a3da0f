package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// RunHook is `pantty hook --seat S --gemini-hook`: what every Gemini CLI hook
// pantty installs runs. It translates Gemini's events into the ones the driver
// knows and passes them through the ordinary `pantty hook` (hookrun.Run):
//
//   - SessionStart → SessionStart (startup, resume, clear);
//   - BeforeAgent → UserPromptSubmit (the prompt carries pantty's header),
//     preceded, when the history was compressed since the last turn, by the
//     compaction's re-injection: a SessionStart source "compact" whose
//     handoff goes into this turn's request as the hook's additionalContext
//     (for a compression pantty did not choose, PreCompact and PostCompact
//     are recorded first, so the handoff is materialized for it);
//   - AfterAgent → a ContextReading from the chat file, then Stop (the reply
//     as last_assistant_message: the chat file's last "gemini" message, not
//     the payload's prompt_response, which repeats chunks of a streamed
//     reply), or StopFailure when the turn ended on an API error (the pane's
//     error line, classified);
//   - BeforeModel, AfterTool → counted, not recorded: a second BeforeModel
//     within one model step is a retry of a failed request, recorded as
//     RequestFailed, and the AfterTool after it as RetryWentThrough
//     (attempts.go);
//   - PreCompress manual → PreCompact (the /compress pantty or a person sent);
//     PreCompress auto fires before every turn whether or not anything is
//     compressed (measured), so it is only remembered (pendingCompress).
//
// Gemini has no prompt id; prompt_id is a hash of the session and the prompt,
// the same in BeforeAgent and AfterAgent, which both carry the prompt. The
// hook's stdout is JSON or nothing: Gemini shows plain text to the person
// instead of giving it to the model. Like every hook it never fails Gemini
// because of pantty trouble.
func RunHook(home, name string, stdin io.Reader, stdout, stderr io.Writer) int {
	head, read := readHead(stdin)
	if head.Event == "BeforeModel" || head.Event == "AfterTool" {
		// Once per model request and per tool call: only the payload's
		// head is read (attempts.go), never the conversation or the output.
		s, err := state.Existing(home, name)
		if err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
			return 0
		}
		h := hookRun{home: home, name: name, s: s, p: head, stderr: stderr}
		if head.Event == "AfterTool" {
			return h.toolRan()
		}
		return h.attempt()
	}
	payload := append(read, hookwire.ReadHookPayload(stdin, stderr)...)
	var p payloadFields
	if json.Unmarshal(payload, &p) != nil {
		return hookrun.Run(home, name, false, "", bytes.NewReader(payload), io.Discard, stderr)
	}
	s, err := state.Existing(home, name)
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		return 0
	}
	h := hookRun{home: home, name: name, s: s, p: p, stderr: stderr}
	switch p.Event {
	case "SessionStart":
		return h.pass(payload, stdout)
	case "BeforeAgent":
		h.newStep(promptID(p.SessionID, p.Prompt))
		h.reinject(stdout)
		return h.forward(map[string]any{"hook_event_name": hookwire.EvUserPromptSubmit, "prompt": p.Prompt}, io.Discard)
	case "AfterAgent":
		msgs := h.history()
		h.reading(msgs)
		if errText := h.turnError(msgs); errText != "" {
			return h.forward(map[string]any{"hook_event_name": hookwire.EvStopFailure, "error": ClassifyError(errText),
				"last_assistant_message": errText}, io.Discard)
		}
		reply := lastReply(msgs, p.Prompt)
		if reply == "" {
			reply = p.Response // the chat file could not be read, or holds no reply text
		}
		return h.forward(map[string]any{"hook_event_name": hookwire.EvStop, "prompt": p.Prompt,
			"last_assistant_message": reply, "stop_hook_active": p.StopHookActive}, io.Discard)
	case "PreCompress":
		h.pendingCompress(p.Trigger)
		if p.Trigger == "manual" {
			return h.forward(map[string]any{"hook_event_name": hookwire.EvPreCompact, "trigger": "manual"}, io.Discard)
		}
		return 0
	}
	return hookrun.Run(home, name, false, "", bytes.NewReader(payload), io.Discard, stderr)
}

// payloadFields are the parts of a Gemini CLI 0.61.0 hook payload pantty
// reads (measured 2026-12-04; docs/testdata/gemini-0.61.0-2026-12-04).
type payloadFields struct {
	Event          string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	Transcript     string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Source         string `json:"source"`
	Prompt         string `json:"prompt"`
	Response       string `json:"prompt_response"`
	StopHookActive bool   `json:"stop_hook_active"`
	Trigger        string `json:"trigger"`
}

// hookRun is one run of the hook: the seat and the payload.
type hookRun struct {
	home, name string
	s          state.Seat
	p          payloadFields
	stderr     io.Writer
}

// promptID names a turn by its session and prompt (Gemini gives hooks none).
func promptID(session, prompt string) string {
	sum := sha256.Sum256([]byte(session + "\x00" + prompt))
	return "g-" + hex.EncodeToString(sum[:8])
}

// forward records ev, with the payload's session, prompt id and paths added,
// through seat.RunHook; what it prints goes to out.
func (h hookRun) forward(ev map[string]any, out io.Writer) int {
	ev["session_id"], ev["transcript_path"], ev["cwd"] = h.p.SessionID, h.p.Transcript, h.p.Cwd
	if h.p.Prompt != "" {
		ev["prompt_id"] = promptID(h.p.SessionID, h.p.Prompt)
	}
	b, _ := json.Marshal(ev)
	return hookrun.Run(h.home, h.name, false, "", bytes.NewReader(b), out, h.stderr)
}

// pass records the payload as it is and turns what seat.RunHook prints (a
// handoff for a step's fresh session) into the hook's additionalContext.
func (h hookRun) pass(payload []byte, stdout io.Writer) int {
	var out bytes.Buffer
	code := hookrun.Run(h.home, h.name, false, "", bytes.NewReader(payload), &out, h.stderr)
	writeContext(stdout, h.p.Event, out.String())
	return code
}

// writeContext prints text as Gemini's hook output that adds it to the
// model's context (hookSpecificOutput.additionalContext); nothing for "".
func writeContext(w io.Writer, event, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "additionalContext": text}})
	fmt.Fprintf(w, "%s\n", b)
}

// pending is harness/gemini-compress.json: a PreCompress not yet settled.
type pending struct {
	At      time.Time `json:"at"`
	Trigger string    `json:"trigger"`
}

func (h hookRun) pendingPath() string { return filepath.Join(h.s.HarnessDir(), "gemini-compress.json") }

// pendingCompress remembers the first unsettled PreCompress: the next
// BeforeAgent looks in the chat file for a compression since then.
func (h hookRun) pendingCompress(trigger string) {
	var old pending
	if b, err := os.ReadFile(h.pendingPath()); err == nil && json.Unmarshal(b, &old) == nil && old.Trigger == "manual" {
		return // a manual one waits for its re-injection; an auto one cannot replace it
	}
	if trigger != "manual" && !old.At.IsZero() {
		return
	}
	b, _ := json.Marshal(pending{At: time.Now().UTC().Truncate(time.Millisecond), Trigger: trigger})
	if err := fsatomic.WriteFile(h.s.TmpDir(), h.pendingPath(), b); err != nil {
		fmt.Fprintf(h.stderr, "pantty hook: %v\n", err)
	}
}

// reinject settles the pending PreCompress as a turn starts: when the chat
// file shows the history replaced since then, the handoff goes into this
// turn (SessionStart source compact, through seat.RunHook, which prints it and
// notes its hash). A compression pantty did not start (auto) gets its
// PreCompact (the handoff materialized) and PostCompact recorded first.
func (h hookRun) reinject(stdout io.Writer) {
	b, err := os.ReadFile(h.pendingPath())
	if err != nil {
		return
	}
	os.Remove(h.pendingPath())
	var pc pending
	if json.Unmarshal(b, &pc) != nil {
		return
	}
	c, err := h.s.LoadConfig()
	if err != nil {
		return
	}
	done, where, err := CompressedSince(Home(h.s, c), h.p.SessionID, pc.At)
	if err != nil || !done {
		return
	}
	if pc.Trigger != "manual" {
		h.forward(map[string]any{"hook_event_name": hookwire.EvPreCompact, "trigger": pc.Trigger}, io.Discard)
		h.forward(map[string]any{"hook_event_name": hookwire.EvPostCompact, "trigger": pc.Trigger, "compact_summary": where}, io.Discard)
	}
	var out bytes.Buffer
	h.forward(map[string]any{"hook_event_name": hookwire.EvSessionStart, "source": "compact"}, &out)
	writeContext(stdout, "BeforeAgent", out.String())
}

// ContextSource names where a Gemini context reading comes from.
const ContextSource = "gemini-cli chat file: the last reply's tokens.input (the request's promptTokenCount)"

// Window is the context window Gemini CLI 0.61.0 assumes for every model it
// routes to by default (its tokenLimit: 1,048,576).
const Window = 1048576

// history is the session's messages as the chat files hold them when the
// turn ends, read once for the reading and the turn's error; nil (with a
// line on stderr) when they cannot be read.
func (h hookRun) history() []message {
	c, err := h.s.LoadConfig()
	if err != nil {
		fmt.Fprintf(h.stderr, "pantty hook: %v\n", err)
		return nil
	}
	msgs, _, err := history(Home(h.s, c), h.p.SessionID)
	if err != nil {
		fmt.Fprintf(h.stderr, "pantty hook: %v\n", err)
	}
	return msgs
}

// reading records the turn's last request as a ContextReading.
func (h hookRun) reading(msgs []message) {
	in, model := lastUsage(msgs)
	if in <= 0 {
		return
	}
	b, _ := json.Marshal(state.ContextReadingPayload{SessionID: h.p.SessionID, TurnID: promptID(h.p.SessionID, h.p.Prompt),
		Occupancy: in, Window: Window, Model: model, Source: ContextSource})
	if _, err := h.s.WriteEventNote(hookwire.EvContextReading, b, map[string]string{"from": "gemini AfterAgent"}, time.Now()); err != nil {
		fmt.Fprintf(h.stderr, "pantty hook: %v\n", err)
	}
}

// NoResponse is AfterAgent's prompt_response when the turn produced no text
// (measured: after an API error).
const NoResponse = "[no response text]"

// turnError is the error a turn without a reply ended on, as the chat file
// records it: Gemini CLI 0.61.0 gives its hooks no error, writes an "error"
// message ("[API Error: {…"code":401…}]") into the chat file before it runs
// AfterAgent, and draws it on the pane only after the hook returned
// (measured 2026-12-04, 2 of 2 failed turns). "" for a turn with a reply or
// no recorded error.
func (h hookRun) turnError(msgs []message) string {
	if strings.TrimSpace(h.p.Response) != NoResponse {
		return ""
	}
	return lastError(msgs, h.p.Prompt)
}

// apiStatusRE finds the HTTP status in Gemini's error JSON ("code":401).
var apiStatusRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"code":\s*(\d{3})\b`) })

// geminiErrors maps Gemini CLI 0.61.0's error line onto the StopFailure
// error values hookwire.ClassifyFailure knows (docs/gemini.md, failure classes).
var geminiErrors = hookwire.ErrorWords{
	{Words: []string{"fetch failed", "econnrefused", "enotfound", "connection refused", "etimedout"}, Name: "connection_failed"},
	{Words: []string{"status 401", "status 403", "unauthenticated", "permission_denied", "api key not valid"}, Name: "authentication_failed"},
	{Words: []string{"billing", "status 402"}, Name: "billing_error"},
	{Words: []string{"status 429", "resource_exhausted", "quota"}, Name: "rate_limit"},
	{Words: []string{"status 503", "unavailable", "overloaded"}, Name: "overloaded"},
	{Words: []string{"status 500", "status 502", "status 504", "internal"}, Name: "server_error"},
}

// ClassifyError names the error of an error line in the StopFailure
// vocabulary (hookwire.ClassifyFailure); the HTTP status in its JSON counts as
// "status N".
func ClassifyError(line string) string {
	if m := apiStatusRE().FindStringSubmatch(line); m != nil {
		line += " status " + m[1]
	}
	return geminiErrors.Name(line)
}
