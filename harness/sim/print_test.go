package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envelope(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not a JSON envelope: %q: %v", out, err)
	}
	return m
}

// -p runs one turn with the same hooks and prints Claude's result envelope.
func TestPrintOneTurn(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	out, errOut, code := e.runChild("hello nonce-p1", "-p", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	env := envelope(t, out)
	if str(env, "type") != "result" || str(env, "subtype") != "success" || env["is_error"] != false ||
		num(env, "num_turns") != 1 || !strings.Contains(str(env, "result"), "> hello nonce-p1") ||
		num(env, "usage", "cache_read_input_tokens") != 12000 || str(env, "session_id") == "" {
		t.Fatalf("envelope: %v", env)
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"} {
		if h, _ := e.hooks(ev); len(h) != 1 {
			t.Fatalf("%s fired %d times", ev, len(h))
		}
	}
	out, _, _ = e.runChild("plain", "-p")
	if !strings.HasPrefix(out, "sim: received 5 chars\n> plain") {
		t.Fatalf("text output %q", out)
	}
	out, _, _ = e.runChild("[sim:slow=400ms] x", "-p", "--output-format", "json")
	if d := num(envelope(t, out), "duration_ms"); d < 400 {
		t.Fatalf("slow marker: turn took %dms", d)
	}
}

// A UserPromptSubmit hook exiting 2 blocks the prompt: no turn reaches the model.
func TestPromptBlockedByHook(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.override["UserPromptSubmit"] = e.record("UserPromptSubmit") + "; echo nope >&2; exit 2"
	out, _, code := e.runChild("hello", "-p", "--output-format", "json")
	env := envelope(t, out)
	if code != 1 || env["is_error"] != true || str(env, "result") != "UserPromptSubmit operation blocked by hook: nope" {
		t.Fatalf("exit %d envelope %v", code, env)
	}
	if _, err := os.Stat(filepath.Join(e.state, "requests.jsonl")); err == nil {
		t.Fatalf("a blocked prompt reached the model: %v", e.requests())
	}
}

// A dispatched input "succeeds" with zero turns: the hazard.
func TestPrintDispatchZeroTurns(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	out, _, code := e.runChild("/x", "-p", "--output-format", "json")
	env := envelope(t, out)
	if code != 0 || str(env, "subtype") != "success" || env["is_error"] != false || num(env, "num_turns") != 0 ||
		str(env, "result") != "Unknown command: /x" {
		t.Fatalf("exit %d envelope %v", code, env)
	}
	if h, _ := e.hooks("UserPromptSubmit"); len(h) != 0 {
		t.Fatal("UserPromptSubmit fired for a dispatched input")
	}
	// /clear ends the session and starts a new one.
	out, _, _ = e.runChild("/clear", "-p", "--output-format", "json")
	ends, _ := e.hooks("SessionEnd")
	starts, _ := e.hooks("SessionStart")
	if len(ends) < 2 || str(ends[len(ends)-2], "reason") != "clear" || str(starts[len(starts)-1], "source") != "clear" ||
		str(starts[len(starts)-1], "session_id") != str(envelope(t, out), "session_id") {
		t.Fatalf("clear hooks: ends %v starts %v", ends, starts)
	}
	kinds := ""
	for _, r := range e.requests() {
		kinds += str(r, "kind") + " "
	}
	if kinds != "command command " {
		t.Fatalf("request kinds %q", kinds)
	}
}

// Provider refusals: StopFailure, is_error, exit 1.
func TestPrintRefusal(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	out, _, code := e.runChild("[sim:overloaded] hi", "-p", "--output-format", "json")
	env := envelope(t, out)
	if code != 1 || env["is_error"] != true || str(env, "subtype") != "error_during_execution" ||
		str(env, "result") != "API Error: Overloaded (529)" || num(env, "num_turns") != 0 {
		t.Fatalf("exit %d envelope %v", code, env)
	}
	sf, _ := e.hooks("StopFailure")
	if len(sf) != 1 || str(sf[0], "error") != "overloaded" {
		t.Fatalf("StopFailure: %v", sf)
	}
	if h, _ := e.hooks("Stop"); len(h) != 0 {
		t.Fatal("Stop fired for a refused turn")
	}
}

// Session flags, start-up failure and the crash marker.
func TestSessionFlagsAndExits(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	if _, _, code := e.runChild("", "--bogus"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	if _, errOut, code := e.runChild("x", "-p", "--resume", newUUID()); code != 1 || !strings.Contains(errOut, "No conversation found") {
		t.Fatalf("resume of unknown session: exit %d %q", code, errOut)
	}
	id := newUUID()
	if _, errOut, code := e.runChild("one", "-p", "--session-id", id); code != 0 {
		t.Fatalf("first run: exit %d %s", code, errOut)
	}
	if _, errOut, code := e.runChild("two", "-p", "--session-id", id); code != 1 || !strings.Contains(errOut, "already in use") {
		t.Fatalf("reused session id: exit %d %q", code, errOut)
	}
	if _, errOut, code := e.runChild("two", "-p", "--resume", id); code != 0 {
		t.Fatalf("resume: exit %d %s", code, errOut)
	}
	reqs := e.requests()
	if last := reqs[len(reqs)-1]; num(last, "history_turns") != 1 || str(last, "session_id") != id {
		t.Fatalf("resumed request: %v", last)
	}
	if _, _, code := e.runChild("boom [sim:crash]", "-p"); code != 3 {
		t.Fatalf("crash marker: exit %d, want 3", code)
	}
	ups, _ := e.hooks("UserPromptSubmit")
	stops, _ := e.hooks("Stop")
	if len(ups) != 3 || len(stops) != 2 {
		t.Fatalf("after crash: %d submits, %d stops", len(ups), len(stops))
	}
	e.env["PANTTY_SIM_FAIL_START"] = "1"
	before, _ := e.hooks("SessionStart")
	if _, _, code := e.runChild("x", "-p"); code != 1 {
		t.Fatalf("PANTTY_SIM_FAIL_START: exit %d, want 1", code)
	}
	if after, _ := e.hooks("SessionStart"); len(after) != len(before) {
		t.Fatal("a failed start fired SessionStart")
	}
}

// @mentions add the file's content to the request, unless disabled.
func TestMentions(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	if err := os.WriteFile(filepath.Join(e.work, "notes.txt"), []byte("NOTE-CONTENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.runChild("read @notes.txt and @nope.txt", "-p")
	e.env["PANTTY_SIM_MENTIONS"] = "0"
	e.runChild("again @notes.txt", "-p")
	reqs := e.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests: %v", reqs)
	}
	m, _ := reqs[0]["mentions"].([]any)
	if len(m) != 1 || m[0] != "notes.txt" || str(reqs[0], "mention_content", "notes.txt") != "NOTE-CONTENT" {
		t.Fatalf("mentions: %v", reqs[0])
	}
	if m, _ := reqs[1]["mentions"].([]any); len(m) != 0 {
		t.Fatalf("mentions with PANTTY_SIM_MENTIONS=0: %v", reqs[1])
	}
}
