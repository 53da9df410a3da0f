package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// RunHook is `pantty hook --seat S --codex-hook`: what every Codex hook pantty
// installs runs. Codex's payloads have Claude Code's shape (hook_event_name,
// session_id, prompt, last_assistant_message, source, trigger) except that a
// turn is named turn_id; it is copied to prompt_id, which the driver binds a
// turn end to, and the event goes through the ordinary `pantty hook`
// (hookrun.RunBlocker: PreCompact materializes, SessionStart source compact
// prints the handoff, which Codex puts into the next request). A compaction
// whose handoff could not be materialized is blocked Codex's way
// (blockCompaction), not by exit 2. PostModelRequest is Codex's own and is
// translated here (modelRequest), as is PermissionRequest (permissionAsked).
// Like every hook it never fails the harness's action because of pantty
// trouble.
func RunHook(home, name string, stdin io.Reader, stdout, stderr io.Writer) int {
	payload := hookwire.ReadHookPayload(stdin, stderr)
	var m map[string]any
	if json.Unmarshal(payload, &m) != nil {
		return hookrun.RunBlocker(home, name, blockCompaction, bytes.NewReader(payload), stdout, stderr)
	}
	if turn, ok := m["turn_id"].(string); ok && turn != "" {
		if _, has := m["prompt_id"]; !has {
			m["prompt_id"] = turn
		}
	}
	if m["hook_event_name"] == "PermissionRequest" {
		permissionAsked(m)
	}
	if m["hook_event_name"] == "PostModelRequest" {
		s, err := state.Existing(home, name)
		if err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
			return 0
		}
		modelRequest(s, m, payload, time.Now(), stderr)
		return 0
	}
	out, _ := json.Marshal(m)
	return hookrun.RunBlocker(home, name, blockCompaction, bytes.NewReader(out), stdout, stderr)
}

// permissionAsked turns Codex's PermissionRequest (0.171.0: tool_name,
// tool_input.command and .description, turn_id, session_id) into the
// Notification the driver already reads as a question to a person
// (hookwire.NotePermissionRequest), so that status names an approval dialog
// on the tmux path as it does Claude Code's. The hook prints nothing and
// exits 0, which leaves the decision to the person at Codex's own dialog
// (measured: the dialog is drawn as without the hook).
func permissionAsked(m map[string]any) {
	in, _ := m["tool_input"].(map[string]any)
	what, _ := m["tool_name"].(string)
	if c, _ := in["command"].(string); c != "" {
		what += ": " + c
	}
	if d, _ := in["description"].(string); d != "" {
		what += " (" + d + ")"
	}
	m["hook_event_name"] = hookwire.EvNotification
	m["notification_type"] = hookwire.NotePermissionRequest
	m["message"] = what
}

// blockCompaction is Codex's PreCompact block: exit 0 with
// {"continue":false,"stopReason":…} on stdout. Codex CLI 0.171.0 takes exit 2
// (Claude Code's block) as a failed hook and compacts anyway — the TUI showed
// "Hook failed" then "Context compacted", the app server ran the summarisation
// request and completed the turn — while {"continue":false} stops it: the TUI
// shows "Hook stopped" and sends no summarisation request, the app server ends
// the compaction's turn interrupted (measured 2026-12-06;
// TestTypedCompactIsRefusedWhenTheHandoffCannotBeMaterialized,
// TestSeatsAppServerRefusesABlockedCompaction; docs/codex.md).
func blockCompaction(message string, stdout io.Writer) int {
	b, _ := json.Marshal(struct {
		Continue   bool   `json:"continue"`
		StopReason string `json:"stopReason"`
	}{false, message})
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}

// ContextSource names where a Codex context reading comes from.
const ContextSource = "codex PostModelRequest token_usage.input_tokens (the request's whole input, as the rollout's last_token_usage; total_token_usage is cumulative and never read)"

// modelRequest translates a PostModelRequest (one per model request, after
// Codex's own retries; measured) of the thread's sampling loop:
//   - completed: a ContextReading of what the request carried (token_usage is
//     this request's usage, the rollout's last_token_usage), with the window
//     from the rollout;
//   - failed: a StopFailure for the turn, since no Stop fires when a turn ends
//     on an API error (measured: 429 → "exceeded retry limit, last status: 429
//     Too Many Requests", then the turn ended), the error classified so the
//     driver can tell a provider refusal (a wait) from a failure.
func modelRequest(s state.Seat, m map[string]any, raw []byte, now time.Time, stderr io.Writer) {
	str := func(k string) string { v, _ := m[k].(string); return v }
	if k := str("kind"); k != "" && k != "sampling" {
		return // a compaction's summarisation request, not the turn's loop
	}
	thread := str("thread_id")
	if thread == "" {
		thread = str("session_id")
	}
	var kind string
	var out any
	switch str("status") {
	case "completed":
		u, _ := m["token_usage"].(map[string]any)
		in, _ := u["input_tokens"].(float64)
		if in <= 0 {
			return
		}
		kind = hookwire.EvContextReading
		out = state.ContextReadingPayload{SessionID: thread, TurnID: str("turn_id"), Occupancy: int(in),
			Window: ContextWindow(str("transcript_path")), Model: str("model"), Source: ContextSource}
	case "failed":
		kind = hookwire.EvStopFailure
		msg := str("error")
		errName := ClassifyError(msg)
		if errName == ErrConnection {
			// Codex keeps the turn running and reconnects by itself
			// (measured): a failed request, not the turn's end.
			kind = hookwire.EvRequestFailed
		}
		out = map[string]string{"hook_event_name": kind, "session_id": thread, "prompt_id": str("turn_id"),
			"error": errName, "last_assistant_message": msg, "cwd": str("cwd")}
	default:
		return
	}
	b, _ := json.Marshal(out)
	note := map[string]string{"from": "codex PostModelRequest " + str("request_id")}
	if kind != hookwire.EvContextReading {
		// Codex's own words for the failure, kept whole: what the error
		// classification was made from (docs/codex.md, failure classes).
		note["codex_payload"] = string(raw)
	}
	if _, err := s.WriteEventNote(kind, b, note, now); err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
	}
}

// ErrConnection is ClassifyError's name for a request that never reached the
// API: Codex's "Connection failed: error sending request".
const ErrConnection = "connection_failed"

// codexStatusRE finds the HTTP status in Codex's error text ("unexpected
// status 401 Unauthorized: …", "exceeded retry limit, last status: 429 …").
var codexStatusRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`status:? (\d{3})\b`) })

// codexErrors maps Codex 0.171.0's own error words (its PostModelRequest
// `error`, measured against the stand-in; docs/codex.md) onto the StopFailure
// error values hookwire.ClassifyFailure knows. First match wins; the HTTP status,
// when the text has one, is matched as "status N".
var codexErrors = hookwire.ErrorWords{
	{Words: []string{"connection failed", "error sending request", "stream disconnected"}, Name: ErrConnection},
	{Words: []string{"status 401", "status 403", "invalid_api_key", "incorrect api key", "sign in again", "refresh token", "not logged in"}, Name: "authentication_failed"},
	{Words: []string{"quota exceeded", "insufficient_quota", "status 402"}, Name: "billing_error"},
	{Words: []string{"usage limit", "usage_not_included"}, Name: "usage_limit"},
	{Words: []string{"status 429", "too many requests", "rate limit"}, Name: "rate_limit"},
	{Words: []string{"status 503", "status 529", "overloaded"}, Name: "overloaded"},
	{Words: []string{"high demand", "status 500", "status 502", "status 504", "internal server error"}, Name: "server_error"},
}

// ClassifyError names a failed request's error in the StopFailure vocabulary
// the driver classifies (hookwire.ClassifyFailure): authentication_failed and
// connection_failed (means), billing_error, usage_limit and rate_limit
// (provider refusals), overloaded and server_error (transient); anything else
// is api_error (a failure of the turn).
func ClassifyError(msg string) string {
	if m := codexStatusRE().FindStringSubmatch(strings.ToLower(msg)); m != nil {
		msg += " status " + m[1]
	}
	return codexErrors.Name(msg)
}

// Notify is the JSON Codex passes to its notify program after a turn.
type Notify struct {
	Type      string   `json:"type"`
	Thread    string   `json:"thread-id"`
	Turn      string   `json:"turn-id"`
	Cwd       string   `json:"cwd"`
	Client    string   `json:"client"`
	Input     []string `json:"input-messages"`
	Assistant string   `json:"last-assistant-message"`
}

// EvCodexNotify is a notify recorded without acting on it.
const EvCodexNotify = "CodexNotify"

// RunNotify is `pantty hook --seat S --codex-notify JSON`: Codex's notify
// program, run once per finished turn (measured: agent-turn-complete with
// thread-id, turn-id, input-messages — the exact submitted text — and
// last-assistant-message; a second one for Codex's own title thread, whose id
// differs and which has no rollout). It is the turn end when the hooks did not
// deliver one: for the seat's thread and a turn with no Stop event yet, it
// records a UserPromptSubmit (the input, for the guard header match) and a Stop,
// with session_id = thread-id and prompt_id = turn-id. Otherwise it is recorded
// as CodexNotify only. It never fails Codex.
func RunNotify(home, name, arg string, stderr io.Writer) int {
	s, err := state.Existing(home, name)
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		return 0
	}
	now := time.Now()
	var n Notify
	if err := json.Unmarshal([]byte(arg), &n); err != nil || n.Type != "agent-turn-complete" || !seatThread(s, n.Thread) || stopSeen(s, n.Turn, now) {
		if _, err := s.WriteEvent(EvCodexNotify, []byte(arg), now); err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		}
		return 0
	}
	ups, _ := json.Marshal(map[string]string{"hook_event_name": hookwire.EvUserPromptSubmit, "session_id": n.Thread,
		"prompt_id": n.Turn, "prompt": strings.Join(n.Input, "\n"), "cwd": n.Cwd})
	stop, _ := json.Marshal(map[string]string{"hook_event_name": hookwire.EvStop, "session_id": n.Thread,
		"prompt_id": n.Turn, "last_assistant_message": n.Assistant, "cwd": n.Cwd})
	note := map[string]string{"from": "codex notify (agent-turn-complete)"}
	for _, e := range []struct {
		kind string
		b    []byte
	}{{hookwire.EvUserPromptSubmit, ups}, {hookwire.EvStop, stop}} {
		if _, err := s.WriteEventNote(e.kind, e.b, note, now); err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		}
		now = now.Add(time.Microsecond) // keep the two in order
	}
	return 0
}

// seatThread reports whether thread is the seat's: the recorded session id, or,
// before one is recorded, a thread with a rollout in the seat's CODEX_HOME
// (Codex's title thread has none; measured).
func seatThread(s state.Seat, thread string) bool {
	if thread == "" {
		return false
	}
	if sess, err := s.SessionFile().Read(); err == nil && sess.ID != "" {
		return sess.ID == thread
	}
	c, err := s.LoadConfig()
	if err != nil {
		return false
	}
	p, _ := RolloutPath(Home(s, c), thread)
	return p != ""
}

// stopSeen reports whether a Stop for this turn was already recorded (by the
// Stop hook, which Codex runs before notify) in the last ten minutes.
func stopSeen(s state.Seat, turn string, now time.Time) bool {
	if turn == "" {
		return false
	}
	for _, dir := range []string{s.EventsDir(), s.SeenDir()} {
		ents, _ := os.ReadDir(dir)
		for i := len(ents) - 1; i >= 0; i-- {
			name := ents[i].Name()
			if !strings.HasSuffix(name, "-"+hookwire.EvStop+".json") {
				continue
			}
			if t, ok := state.EventTime(name); ok && now.Sub(t) > 10*time.Minute {
				break // sorted by time: older ones cannot be this turn's
			}
			if ev, err := hookwire.ReadEvent(filepath.Join(dir, name)); err == nil && ev.Fields.PromptID == turn {
				return true
			}
		}
	}
	return false
}
