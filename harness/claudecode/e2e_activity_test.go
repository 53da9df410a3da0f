package claudecode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// TestActivityFromARealToolCall: with activity on, the real claude runs a Bash
// tool call the model asked for; its PreToolUse and PostToolUse hooks record
// the call in activity.toml with the credential in the command masked, the tool
// really runs (the hook never blocks it), and the turn ends normally, its
// message processed once. The hooks' events are telemetry, never evidence.
func TestActivityFromARealToolCall(t *testing.T) {
	r := newRig(t, "act", "activity = true", `permission_mode = "acceptEdits"`)
	// Bash is allowed for this workdir (project settings, trusted by
	// PrepareHome) and the mode is acceptEdits, so no permission prompt stops
	// the turn. Claude Code 2.1.328's default mode is "auto", whose safety check
	// runs on Anthropic's server: through a loopback API it cannot run, and for
	// this command (an env assignment and sh -c) a dialog holds the turn
	// (measured; docs/claude-code.md).
	r.allowBash()
	r.Start()

	const secret = "abc123def456ghi789jkl012"
	r.Send("tool", "run the probe\n[standin:bash=API_KEY="+secret+" sh -c 'echo ran > tool-ran.txt'")
	r.WaitFinal(90*time.Second, "tool")
	if st := r.Status("tool"); st.State != inbox.StateProcessed {
		t.Fatalf("message tool ended %s (%s), want processed", st.State, st.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(r.Work, "tool-ran.txt")); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Fatalf("the Bash tool call did not run (%q, %v): the activity hook must never stop the action", b, err)
	}
	if n := r.Turns()["tool"]; n != 1 {
		t.Fatalf("message tool reached the model %d times, want 1", n)
	}
	results := 0
	for _, q := range r.api.Requests() {
		if q.Kind == "tool_result" {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("%d requests carried a tool result back, want 1: the model's tool call was not run once", results)
	}

	a, err := r.Seat().ActivityFile().Read()
	if err != nil {
		t.Fatalf("no activity recorded from the real tool call: %v", err)
	}
	if a.Tool != "Bash" || a.Phase != "post" || !strings.Contains(a.What, "API_KEY=") || !strings.Contains(a.What, "tool-ran.txt") {
		t.Fatalf("activity.toml holds %+v, want the finished Bash call with its command", a)
	}
	t.Logf("activity.toml: tool %s, phase %s, what %q", a.Tool, a.Phase, a.What)
	if strings.Contains(a.What, secret) || strings.Contains(a.What, secret[:12]) {
		t.Fatalf("the credential reached activity.toml unmasked: %q", a.What)
	}
	for _, kind := range []string{"PreToolUse", "PostToolUse"} {
		if evs := r.Events(kind); len(evs) != 0 {
			t.Fatalf("%d %s events in events/: activity must never be turn evidence", len(evs), kind)
		}
	}
}

// TestAQuestionMidTurnIsShown: in Claude Code's default auto mode, a tool call
// its safety check must clear cannot be cleared through a loopback API; claude
// opens a dialog and fires Notification (agent_needs_input). The driver names
// that in the heartbeat, so `status` says why the turn does not end, and leaves
// the message submitted (its ceiling still applies).
func TestAQuestionMidTurnIsShown(t *testing.T) {
	r := newRig(t, "ask")
	r.Start()
	r.Send("q", "run the probe\n[standin:bash=API_KEY=abc123def456ghi789jkl012 sh -c 'echo ran > tool-ran.txt'")
	var hb state.Heartbeat
	r.WaitFor("the heartbeat to name the harness's question", 60*time.Second, func() bool {
		var err error
		hb, err = r.Seat().HeartbeatFile().Read()
		return err == nil && strings.Contains(hb.Waiting, "asks for a person")
	})
	if hb.Phase != state.PhaseInTurn || !strings.Contains(hb.Waiting, "agent_needs_input") || !strings.HasPrefix(hb.Waiting, "q: ") {
		t.Fatalf("heartbeat %s (%s), want in-turn naming message q and agent_needs_input", hb.Phase, hb.Waiting)
	}
	if st := r.Status("q"); st.State != inbox.StateSubmitted {
		t.Fatalf("message q is %s while the harness waits for a person, want submitted", st.State)
	}
	if res := r.Run("status", "ask"); res.Code != 0 || !strings.Contains(res.Stdout, "asks for a person (agent_needs_input)") {
		t.Fatalf("status does not say the harness waits for a person: %s", res)
	}
	if _, err := os.Stat(filepath.Join(r.Work, "tool-ran.txt")); err == nil {
		t.Fatal("the tool ran although the dialog was never answered")
	}
}
