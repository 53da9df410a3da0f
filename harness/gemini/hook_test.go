package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// hookSeat is a real seat directory whose GEMINI_CLI_HOME is a copy of the
// recorded one in testdata (session 3adbe5ce-…), for RunHook to translate
// hook payloads against.
func hookSeat(t *testing.T) state.Seat {
	t.Helper()
	harness.Register(Adapter{})
	root := t.TempDir()
	home := filepath.Join(root, "gemini-home")
	if out, err := exec.Command("cp", "-r", "testdata/home", home).CombinedOutput(); err != nil {
		t.Fatalf("copy the recorded home: %v %s", err, out)
	}
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := state.Open(filepath.Join(root, "pantty"), "g1")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(s, "gemini-cli", work, map[string]string{"GEMINI_CLI_HOME": home}); err != nil {
		t.Fatal(err)
	}
	if err := s.SessionFile().Write(state.Session{Harness: "gemini-cli", ID: recorded}); err != nil {
		t.Fatal(err)
	}
	return s
}

// hook runs RunHook on one payload and returns what it printed and the
// events it recorded since the last call (and marks them seen).
func hook(t *testing.T, s state.Seat, payload map[string]any) (string, []hookwire.Event) {
	t.Helper()
	payload["session_id"] = recorded
	b, _ := json.Marshal(payload)
	var out, errOut bytes.Buffer
	if code := RunHook(s.Home, s.Name, bytes.NewReader(b), &out, &errOut); code != 0 {
		t.Fatalf("RunHook exit %d: %s", code, errOut.String())
	}
	names, err := s.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	var evs []hookwire.Event
	for _, n := range names {
		ev, err := hookwire.ReadEvent(filepath.Join(s.EventsDir(), n))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if err := s.MarkSeen(n); err != nil {
			t.Fatal(err)
		}
	}
	return out.String(), evs
}

func kinds(evs []hookwire.Event) string {
	var k []string
	for _, ev := range evs {
		k = append(k, ev.Kind)
	}
	return strings.Join(k, " ")
}

// BeforeAgent and AfterAgent become UserPromptSubmit and ContextReading +
// Stop with one prompt id; a turn that ended on a recorded API error becomes
// StopFailure with the error classified; the hooks print nothing.
func TestHookTranslatesATurn(t *testing.T) {
	s := hookSeat(t)
	prompt := "[pantty] msg=m11 nonce=0123456789ab mentions=0\n<<<pantty-0123456789ab\nhello from the board\npantty-0123456789ab>>>"
	out, evs := hook(t, s, map[string]any{"hook_event_name": "BeforeAgent", "prompt": prompt})
	if out != "" || kinds(evs) != hookwire.EvUserPromptSubmit || evs[0].Fields.Prompt != prompt || evs[0].Fields.PromptID != promptID(recorded, prompt) {
		t.Fatalf("BeforeAgent: printed %q, events %s %+v", out, kinds(evs), evs)
	}
	// The reply is the chat file's (its recorded turn's gemini message), not
	// the payload's prompt_response, which repeats chunks of a streamed reply.
	out, evs = hook(t, s, map[string]any{"hook_event_name": "AfterAgent", "prompt": prompt, "prompt_response": "standin received: … garbled"})
	if out != "" || kinds(evs) != hookwire.EvContextReading+" "+hookwire.EvStop || evs[1].Fields.PromptID != promptID(recorded, prompt) ||
		evs[1].Fields.LastAssistantMessage != "standin received: [pantty] msg=m11 nonce=0123456789ab mentions=0" {
		t.Fatalf("AfterAgent: printed %q, events %s %+v", out, kinds(evs), evs)
	}
	var r state.ContextReadingPayload
	if err := json.Unmarshal(evs[0].Payload, &r); err != nil || r.Occupancy != 12698 || r.Window != Window {
		t.Fatalf("context reading %+v %v", r, err)
	}
	failed := "[pantty] msg=m12 nonce=ba9876543210 mentions=0\n<<<pantty-ba9876543210\nthis one fails [standin:error=401]\npantty-ba9876543210>>>"
	_, evs = hook(t, s, map[string]any{"hook_event_name": "AfterAgent", "prompt": failed, "prompt_response": NoResponse})
	last := evs[len(evs)-1]
	if last.Kind != hookwire.EvStopFailure || last.Fields.Error != "authentication_failed" || !strings.Contains(last.Fields.LastAssistantMessage, `"code":401`) {
		t.Fatalf("AfterAgent of a failed turn: %s %+v", kinds(evs), last.Fields)
	}
}

// PreCompress auto fires before every turn: remembered, not recorded. A
// manual one is PreCompact. The next BeforeAgent, the history compressed
// since, re-injects the handoff: SessionStart(compact) with its hash, and
// the handoff printed as the hook's additionalContext JSON.
func TestHookReinjectsAfterACompression(t *testing.T) {
	s := hookSeat(t)
	if _, evs := hook(t, s, map[string]any{"hook_event_name": "PreCompress", "trigger": "auto"}); len(evs) != 0 {
		t.Fatalf("PreCompress auto recorded %s", kinds(evs))
	}
	if _, evs := hook(t, s, map[string]any{"hook_event_name": "PreCompress", "trigger": "manual"}); kinds(evs) != hookwire.EvPreCompact {
		t.Fatalf("PreCompress manual: %s", kinds(evs))
	}
	// The recorded /compress ran at 05:14:16.992; its PreCompress is dated
	// just before it, as the real one was.
	at, _ := time.Parse(time.RFC3339Nano, "2026-12-04T05:14:16.900Z")
	b, _ := json.Marshal(pending{At: at, Trigger: "manual"})
	if err := os.WriteFile(filepath.Join(s.HarnessDir(), "gemini-compress.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, evs := hook(t, s, map[string]any{"hook_event_name": "BeforeAgent", "prompt": "next turn"})
	if kinds(evs) != hookwire.EvSessionStart+" "+hookwire.EvUserPromptSubmit || evs[0].Fields.Source != "compact" || evs[0].Pantty["injected_hash"] == "" {
		t.Fatalf("BeforeAgent after a compression: %s %+v", kinds(evs), evs)
	}
	var raw map[string]map[string]string
	if err := json.Unmarshal([]byte(out), &raw); err != nil || raw["hookSpecificOutput"]["hookEventName"] != "BeforeAgent" ||
		!strings.Contains(raw["hookSpecificOutput"]["additionalContext"], "pantty handoff for seat g1") {
		t.Fatalf("printed %q (%v): want the handoff as BeforeAgent's additionalContext", out, err)
	}
	if _, err := os.Stat(filepath.Join(s.HarnessDir(), "gemini-compress.json")); err == nil {
		t.Fatal("the pending compression was not settled")
	}
	// Settled: the turn after that injects nothing.
	if out, evs := hook(t, s, map[string]any{"hook_event_name": "BeforeAgent", "prompt": "and the next"}); out != "" || kinds(evs) != hookwire.EvUserPromptSubmit {
		t.Fatalf("a second turn: printed %q, events %s", out, kinds(evs))
	}
}
