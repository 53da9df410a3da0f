package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SessionStart fires only once bracketed paste is on: a paste made from
// inside the SessionStart hook arrives bracketed and stays one prompt.
func TestReadyOnlyAfterBracketedPaste(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.override["SessionStart"] = e.record("SessionStart") +
		`; printf 'alpha\nbeta' | tmux -S {SOCK} load-buffer -b early - && tmux -S {SOCK} paste-buffer -p -d -b early -t sim`
	p := e.start()
	ss := e.waitHooks("SessionStart", 1)
	if got := str(ss[0], "source"); got != "startup" {
		t.Fatalf("source = %q, want startup", got)
	}
	p.waitBox("alpha\nbeta")
	time.Sleep(60 * time.Millisecond)
	p.keys("Enter")
	ups := e.waitHooks("UserPromptSubmit", 1)
	if got := str(ups[0], "prompt"); got != "alpha\nbeta" {
		t.Fatalf("prompt = %q, want the whole bracketed paste", got)
	}
	e.noHook("UserPromptSubmit", 1, 150*time.Millisecond)
}

// A bracketed paste then Enter: UserPromptSubmit carries the exact text,
// Stop the same prompt_id and a reply quoting the first line.
func TestPasteEnterFiresPromptAndStop(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.env["PANTTY_SIM_IDLE"] = "150ms"
	p := e.start()
	e.waitHooks("SessionStart", 1)
	text := "nonce-7f3 first line\nsecond line"
	p.submit(text)
	ups := e.waitHooks("UserPromptSubmit", 1)
	stop := e.waitHooks("Stop", 1)
	if got := str(ups[0], "prompt"); got != text {
		t.Fatalf("prompt = %q, want %q", got, text)
	}
	id := str(ups[0], "prompt_id")
	if id == "" || str(stop[0], "prompt_id") != id {
		t.Fatalf("prompt ids differ: submit %q stop %q", id, str(stop[0], "prompt_id"))
	}
	msg := str(stop[0], "last_assistant_message")
	if !strings.Contains(msg, "received 32 chars") || !strings.Contains(msg, "> nonce-7f3 first line") {
		t.Fatalf("reply %q does not prove delivery", msg)
	}
	if field(stop[0], "stop_hook_active") != false || str(stop[0], "hook_event_name") != "Stop" {
		t.Fatalf("stop payload: %v", stop[0])
	}
	reqs := e.requests()
	if len(reqs) != 1 || str(reqs[0], "kind") != "turn" || str(reqs[0], "new_input") != text ||
		str(reqs[0], "prompt_id") != id || !strings.Contains(str(reqs[0], "injected"), "ctx:startup") {
		t.Fatalf("request log: %v", reqs)
	}
	rows := e.transcript(str(ups[0], "session_id"))
	if len(rows) != 2 || str(rows[0], "type") != "user" || str(rows[1], "type") != "assistant" ||
		str(rows[1], "promptId") != id || num(rows[1], "message", "usage", "cache_read_input_tokens") != 12000 {
		t.Fatalf("transcript: %v", rows)
	}
	// The status line runs after the turn with the cumulative input count.
	end := time.Now().Add(deadline)
	for {
		st, _ := e.hooks("Status")
		if len(st) >= 2 && num(st[len(st)-1], "context_window", "total_input_tokens") > 12000 {
			cu := field(st[len(st)-1], "context_window", "current_usage").(map[string]any)
			if num(cu, "cache_read_input_tokens") != 12000 {
				t.Fatalf("current_usage: %v", cu)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no status line payload after the turn: %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.waitScreen("idle screen with status", func(s string) bool {
		b, _ := inputBox(s)
		return b == "" && !strings.Contains(s, "esc to interrupt") && strings.Contains(s, "status-ok")
	})
	if n := e.waitHooks("Notification", 1); str(n[0], "notification_type") != "idle_prompt" {
		t.Fatalf("Notification: %v", n[0])
	}
}

// The hazard pantty must avoid: a paste before readiness is not bracketed,
// its newlines arrive as Enter, and each line is submitted on its own.
func TestPasteBeforeReadySubmitsLineByLine(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.env["PANTTY_SIM_STARTUP"] = "1500ms"
	p := e.start()
	p.waitScreen("banner", func(s string) bool { return strings.Contains(s, "Starting…") })
	p.paste("first line\nsecond line\n")
	if h, _ := e.hooks("SessionStart"); len(h) != 0 {
		t.Fatal("pasted after ready; the test proves nothing")
	}
	ups := e.waitHooks("UserPromptSubmit", 2)
	if str(ups[0], "prompt") != "first line" || str(ups[1], "prompt") != "second line" {
		t.Fatalf("prompts = %q, %q", str(ups[0], "prompt"), str(ups[1], "prompt"))
	}
	e.waitHooks("Stop", 2)
}

// Leading sigils dispatch locally (for real); a leading space does not.
func TestSigilDispatch(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	p := e.start()
	e.waitHooks("SessionStart", 1)

	p.submit(" /x")
	if ups := e.waitHooks("UserPromptSubmit", 1); str(ups[0], "prompt") != " /x" {
		t.Fatalf("prompt = %q", str(ups[0], "prompt"))
	}
	e.waitHooks("Stop", 1)
	p.waitBox("")

	p.submit("!touch made.txt")
	p.waitScreen("shell output", func(s string) bool { return strings.Contains(s, "! touch made.txt") })
	if _, err := os.Stat(filepath.Join(e.work, "made.txt")); err != nil {
		t.Fatalf("!touch did not run: %v", err)
	}

	p.submit("/x")
	p.waitScreen("unknown command", func(s string) bool { return strings.Contains(s, "Unknown command: /x") })

	p.submit("/context")
	p.waitScreen("context breakdown", func(s string) bool {
		return strings.Contains(s, "System prompt and tools (floor): 12000 tokens") && strings.Contains(s, "Free space:")
	})

	p.submit("/compact keep it short")
	pre := e.waitHooks("PreCompact", 1)
	if str(pre[0], "custom_instructions") != "keep it short" || str(pre[0], "trigger") != "manual" {
		t.Fatalf("PreCompact payload: %v", pre[0])
	}
	post := e.waitHooks("PostCompact", 1)
	if !strings.Contains(str(post[0], "compact_summary"), "keep it short") {
		t.Fatalf("PostCompact payload: %v", post[0])
	}
	var kinds []string
	for _, r := range e.requests() {
		kinds = append(kinds, str(r, "kind")+":"+str(r, "new_input"))
	}
	want := "turn: /x|shell:!touch made.txt|command:/x|command:/context|compact:/compact keep it short"
	if got := strings.Join(kinds, "|"); got != want {
		t.Fatalf("request log kinds\n got %s\nwant %s", got, want)
	}
	e.noHook("UserPromptSubmit", 1, 0)
}

// [sim:swallow-enter=N] eats N Enters, then Enter submits.
func TestSwallowEnter(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	p := e.start()
	e.waitHooks("SessionStart", 1)
	text := "[sim:swallow-enter=2] go"
	p.paste(text)
	p.waitBox(text)
	time.Sleep(60 * time.Millisecond)
	p.keys("Enter")
	time.Sleep(50 * time.Millisecond)
	p.keys("Enter")
	e.noHook("UserPromptSubmit", 0, 300*time.Millisecond)
	p.waitBox(text)
	p.keys("Enter")
	if ups := e.waitHooks("UserPromptSubmit", 1); str(ups[0], "prompt") != text {
		t.Fatalf("prompt = %q", str(ups[0], "prompt"))
	}
}

// An Enter inside the paste commit window is a newline, not a submit.
func TestEnterInsidePasteWindowIsNewline(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.env["PANTTY_SIM_COMMIT"] = "700ms"
	p := e.start()
	e.waitHooks("SessionStart", 1)
	p.tmuxIn("x", "load-buffer", "-b", "t", "-", ";", "paste-buffer", "-p", "-d", "-b", "t", "-t", "sim",
		";", "send-keys", "-t", "sim", "Enter")
	p.waitBox("x\n")
	e.noHook("UserPromptSubmit", 0, 200*time.Millisecond)
	time.Sleep(700 * time.Millisecond)
	p.keys("Enter")
	if ups := e.waitHooks("UserPromptSubmit", 1); str(ups[0], "prompt") != "x\n" {
		t.Fatalf("prompt = %q", str(ups[0], "prompt"))
	}
}

// A paste is drawn only once it commits: while the box does not show it, an
// Enter would be a newline; once it shows, an Enter submits it. This is the
// order pantty's Enter-on-commit relies on (docs/performance-history.md); before,
// the simulator drew the paste at once, inside its paste window.
func TestPasteIsDrawnOnlyOnceCommitted(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.env["PANTTY_SIM_COMMIT"] = "600ms"
	p := e.start()
	e.waitHooks("SessionStart", 1)
	p.waitBox("")
	pasted := time.Now()
	p.paste("y")
	for time.Since(pasted) < 400*time.Millisecond {
		if b, _ := inputBox(p.capture()); b != "" {
			t.Fatalf("the box shows %q %s after the paste, inside a 600 ms commit window", b, time.Since(pasted))
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.waitBox("y")
	if since := time.Since(pasted); since < 600*time.Millisecond {
		t.Fatalf("the box showed the paste %s after it, before it committed", since)
	}
	p.keys("Enter")
	if ups := e.waitHooks("UserPromptSubmit", 1); str(ups[0], "prompt") != "y" {
		t.Fatalf("prompt = %q", str(ups[0], "prompt"))
	}
}

// Escape cancels a turn: no Stop, an interruption row, the prompt back in
// the box; C-u clears it; a double Escape on the empty box opens Rewind.
func TestEscapeCancelsTurn(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	p := e.start()
	e.waitHooks("SessionStart", 1)
	text := "[sim:hang] wait for me"
	p.submit(text)
	ups := e.waitHooks("UserPromptSubmit", 1)
	p.waitScreen("busy line", func(s string) bool { return strings.Contains(s, "esc to interrupt") })
	p.keys("Escape")
	p.waitScreen("prompt back in the box", func(s string) bool {
		b, _ := inputBox(s)
		return b == text && !strings.Contains(s, "esc to interrupt")
	})
	e.noHook("Stop", 0, 200*time.Millisecond)
	e.noHook("StopFailure", 0, 0)
	rows := e.transcript(str(ups[0], "session_id"))
	last := rows[len(rows)-1]
	if str(last, "type") != "user" || str(last, "message", "content") != "[Request interrupted by user]" {
		t.Fatalf("last transcript row: %v", last)
	}
	p.keys("C-u")
	p.waitBox("")
	p.keys("Escape", "Escape")
	p.waitScreen("rewind menu", func(s string) bool { return strings.Contains(s, "Rewind") })
	p.keys("Escape")
	p.waitScreen("menu closed", func(s string) bool {
		_, ok := inputBox(s)
		return ok && !strings.Contains(s, "Rewind")
	})
}

// A PreCompact hook exiting 2 blocks compaction and shows its stderr.
func TestPreCompactExit2Blocks(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.override["PreCompact"] = e.record("PreCompact") + "; echo 'not now' >&2; exit 2"
	p := e.start()
	e.waitHooks("SessionStart", 1)
	p.submit("/compact")
	p.waitScreen("blocked message", func(s string) bool {
		return strings.Contains(s, "Compaction blocked by PreCompact hook: not now")
	})
	e.noHook("PostCompact", 0, 200*time.Millisecond)
	reqs := e.requests()
	if len(reqs) != 1 || str(reqs[0], "kind") != "compact-blocked" {
		t.Fatalf("request log: %v", reqs)
	}
}

// After /compact, SessionStart (source compact) fires and its stdout is
// injected into the next request; the reclaimable part shrank.
func TestSessionStartInjectedAfterCompact(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	p := e.start()
	e.waitHooks("SessionStart", 1)
	big := "big " + strings.Repeat("y", 4000)
	p.submit(big)
	e.waitHooks("Stop", 1)
	p.waitBox("")
	p.submit("/compact")
	e.waitHooks("PostCompact", 1)
	ss := e.waitHooks("SessionStart", 2)
	if str(ss[1], "source") != "compact" {
		t.Fatalf("second SessionStart source = %q", str(ss[1], "source"))
	}
	p.waitScreen("idle after compaction", func(s string) bool { return !strings.Contains(s, "esc to interrupt") })
	p.submit("after")
	e.waitHooks("Stop", 2)
	var turns []map[string]any
	for _, r := range e.requests() {
		if str(r, "kind") == "turn" {
			turns = append(turns, r)
		}
	}
	if len(turns) != 2 {
		t.Fatalf("turns: %v", turns)
	}
	if !strings.Contains(str(turns[0], "injected"), "ctx:startup") || !strings.Contains(str(turns[1], "injected"), "ctx:compact") {
		t.Fatalf("injected: %q then %q", str(turns[0], "injected"), str(turns[1], "injected"))
	}
	if num(turns[1], "history_turns") != 1 {
		t.Fatalf("history_turns = %d", num(turns[1], "history_turns"))
	}
	before, after := num(turns[0], "usage", "cache_creation_input_tokens"), num(turns[1], "usage", "cache_creation_input_tokens")
	if after >= 100 || before != 0 || num(turns[1], "usage", "cache_read_input_tokens") != 12000 {
		t.Fatalf("reclaimable after compaction = %d (before first turn %d)", after, before)
	}
}

// --resume keeps the session id and carries the history into the request.
func TestResumeKeepsSessionAndHistory(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	id := newUUID()
	p := e.start("--session-id", id)
	e.waitHooks("SessionStart", 1)
	p.submit("first")
	e.waitHooks("Stop", 1)
	p.kill()
	if end := e.waitHooks("SessionEnd", 1); str(end[0], "reason") != "other" || str(end[0], "session_id") != id {
		t.Fatalf("SessionEnd: %v", end[0])
	}
	p2 := e.start("--resume", id)
	ss := e.waitHooks("SessionStart", 2)
	if str(ss[1], "source") != "resume" || str(ss[1], "session_id") != id {
		t.Fatalf("resume SessionStart: %v", ss[1])
	}
	p2.waitScreen("history", func(s string) bool { return strings.Contains(s, "> first") })
	p2.submit("second")
	e.waitHooks("Stop", 2)
	reqs := e.requests()
	last := reqs[len(reqs)-1]
	if str(last, "session_id") != id || num(last, "history_turns") != 1 || str(last, "new_input") != "second" {
		t.Fatalf("resumed request: %v", last)
	}
	if rows := e.transcript(id); len(rows) != 4 {
		t.Fatalf("transcript has %d rows, want 4", len(rows))
	}
}

// A 429 marker: StopFailure instead of Stop, then the placeholder.
func TestRateLimitStopFailure(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	p := e.start()
	e.waitHooks("SessionStart", 1)
	p.submit("[sim:429 reset=in 2m] hi")
	ups := e.waitHooks("UserPromptSubmit", 1)
	sf := e.waitHooks("StopFailure", 1)
	if str(sf[0], "error") != "rate_limit" || str(sf[0], "prompt_id") != str(ups[0], "prompt_id") ||
		str(sf[0], "last_assistant_message") != "API Error: Request rejected (429) · resets in 2m" {
		t.Fatalf("StopFailure: %v", sf[0])
	}
	p.waitScreen("placeholder", func(s string) bool { return strings.Contains(s, "> Resend your message to try again") })
	e.noHook("Stop", 0, 100*time.Millisecond)
	reqs := e.requests()
	if len(reqs) != 1 || str(reqs[0], "error") != "rate_limit" {
		t.Fatalf("request log: %v", reqs)
	}
}
