package codex_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A failed request's error is named in the StopFailure vocabulary and then
// classified by the driver's table; the texts are the ones Codex 0.171.0 put in
// PostModelRequest's error against the stand-in's faults (docs/codex.md). A
// port number holding "401" or "500" in the url is not a status.
func TestClassifyError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		msg, name string
		class     machine.Class
	}{
		{"unexpected status 401 Unauthorized: Incorrect API key provided: sk-…. You can find your API key at https://platform.openai.com/account/api-keys., url: http://127.0.0.1:40123/v1/responses", "authentication_failed", machine.ClassMeans},
		{"Connection failed: error sending request", codex.ErrConnection, machine.ClassMeans},
		{"Quota exceeded. Check your plan and billing details.", "billing_error", machine.ClassProvider},
		{"You've hit your usage limit. Try again later.", "usage_limit", machine.ClassProvider},
		{"exceeded retry limit, last status: 429 Too Many Requests", "rate_limit", machine.ClassProvider},
		{"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:45001/v1/responses", "overloaded", machine.ClassTransient},
		{"We’re currently experiencing high demand, which may cause temporary errors.", "server_error", machine.ClassTransient},
		{"exceeded retry limit, last status: 500 Internal Server Error", "server_error", machine.ClassTransient},
		{"unexpected status 400 Bad Request: input too long, url: http://127.0.0.1:40100/v1/responses", "api_error", machine.ClassWork},
	} {
		name := codex.ClassifyError(c.msg)
		if name != c.name {
			t.Errorf("%q: named %s, want %s", c.msg, name, c.name)
		}
		if class, _ := hookwire.ClassifyFailure(name, c.msg); class != c.class {
			t.Errorf("%q (%s): class %s, want %s", c.msg, name, class, c.class)
		}
	}
}

// notify is the turn end only for the seat's thread and only when no Stop came:
// Codex's title thread (another id, no rollout) and a turn the hooks already
// ended are recorded, never acted on.
func TestNotifyFiltersTheTitleThreadAndHookEndedTurns(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "notify")
	s := h.Seat()
	if err := s.SessionFile().Write(state.Session{Harness: "sim", ID: "01a237bc-dcb1-7042-8b96-e42ff21a4e27", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	note := func(thread, turn string) string {
		return `{"type":"agent-turn-complete","thread-id":"` + thread + `","turn-id":"` + turn +
			`","cwd":"/w","client":"codex-tui","input-messages":["[pantty] msg=m1 nonce=n\nhi"],"last-assistant-message":"ok"}`
	}
	count := func(kind string) int {
		names, _ := s.PendingEvents()
		n := 0
		for _, name := range names {
			if strings.HasSuffix(name, "-"+kind+".json") {
				n++
			}
		}
		return n
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bd-04f8-7ed3-bb9a-3040b5d4c3f9", "t-title"), io.Discard)
	if count(hookwire.EvStop) != 0 || count(codex.EvCodexNotify) != 1 {
		t.Fatalf("the title thread's notify made a turn end")
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bc-dcb1-7042-8b96-e42ff21a4e27", "t1"), io.Discard)
	if count(hookwire.EvUserPromptSubmit) != 1 || count(hookwire.EvStop) != 1 {
		t.Fatalf("the seat's notify without a Stop hook: want UserPromptSubmit and Stop")
	}
	names, _ := s.PendingEvents()
	ev, err := hookwire.ReadEvent(s.EventsDir() + "/" + names[len(names)-1])
	if err != nil || ev.Kind != hookwire.EvStop || ev.Fields.PromptID != "t1" || ev.Fields.SessionID != "01a237bc-dcb1-7042-8b96-e42ff21a4e27" {
		t.Fatalf("Stop from notify: %+v %v", ev.Fields, err)
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bc-dcb1-7042-8b96-e42ff21a4e27", "t1"), io.Discard)
	if count(hookwire.EvStop) != 1 || count(codex.EvCodexNotify) != 2 {
		t.Fatalf("a second notify for a turn that has its Stop must only be recorded")
	}
}

// A PreCompact whose handoff cannot be materialized (no session.toml) is
// blocked Codex's way: exit 0 with {"continue":false,"stopReason":…} on
// stdout, since Codex 0.171.0 compacts anyway on exit 2 (measured:
// TestSeatsAppServerRefusesABlockedCompaction), the reason on stderr too, and
// the event records the block. Once the handoff materializes the hook prints
// nothing and lets the compaction go ahead.
func TestRunHookBlocksACompactionWithContinueFalse(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cxblock")
	s := h.Seat()
	pre := `{"hook_event_name":"PreCompact","session_id":"01a237bc-dcb1-7042-8b96-e42ff21a4e27","turn_id":"t1","trigger":"manual"}`
	var out, errOut bytes.Buffer
	if code := codex.RunHook(h.Home, h.Name, strings.NewReader(pre), &out, &errOut); code != 0 {
		t.Fatalf("blocked PreCompact: exit %d, want 0 (Codex takes exit 2 as a failed hook)", code)
	}
	var answer map[string]any
	if err := json.Unmarshal(out.Bytes(), &answer); err != nil || len(answer) != 2 || answer["continue"] != false {
		t.Fatalf("stdout %q: want {\"continue\":false,\"stopReason\":…}", out.String())
	}
	reason := "handoff: read " + s.Dir + "/session.toml"
	want := "pantty: compaction blocked: the handoff could not be materialized: " + reason
	if got, _ := answer["stopReason"].(string); !strings.HasPrefix(got, want) {
		t.Fatalf("stopReason %q, want it to start %q", got, want)
	}
	if !strings.HasPrefix(errOut.String(), want) {
		t.Fatalf("stderr %q, want the block's line", errOut.String())
	}
	evs := h.Events(hookwire.EvPreCompact)
	if len(evs) != 1 || !strings.HasPrefix(evs[0].Pantty["block"], reason) {
		t.Fatalf("PreCompact events %+v, want one with the block note", evs)
	}

	if err := s.SessionFile().Write(state.Session{Harness: "codex", ID: "01a237bc-dcb1-7042-8b96-e42ff21a4e27", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := codex.RunHook(h.Home, h.Name, strings.NewReader(pre), &out, &errOut); code != 0 || out.Len() != 0 || errOut.Len() != 0 {
		t.Fatalf("materialized PreCompact: exit %d, stdout %q, stderr %q; want 0 and nothing", code, out.String(), errOut.String())
	}
	if evs := h.Events(hookwire.EvPreCompact); len(evs) != 2 || evs[1].Pantty["materialized_by"] != "hook" {
		t.Fatalf("PreCompact events %+v, want the second materialized by the hook", evs)
	}
}

// TestRunHookNamesAPermissionRequest: Codex's PermissionRequest (0.171.0's
// payload, recorded on a seat) is recorded as the Notification the driver
// reads as a question to a person, naming the tool, the command and the
// model's reason; the hook prints nothing and exits 0, which leaves the
// decision to Codex's own dialog.
func TestRunHookNamesAPermissionRequest(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cxperm")
	req := `{"hook_event_name":"PermissionRequest","session_id":"01a24e54-4072-75a0-9354-63dc7879b986","turn_id":"01a24e54-4db9-7a91-a698-2fe6e35dd72e",` +
		`"permission_mode":"default","tool_name":"Bash","tool_input":{"command":"touch approved.txt","description":"needs to leave the sandbox"}}`
	var out, errOut bytes.Buffer
	if code := codex.RunHook(h.Home, h.Name, strings.NewReader(req), &out, &errOut); code != 0 || out.Len() != 0 || errOut.Len() != 0 {
		t.Fatalf("PermissionRequest: exit %d, stdout %q, stderr %q; want 0 and nothing", code, out.String(), errOut.String())
	}
	evs := h.Events(hookwire.EvNotification)
	if len(evs) != 1 {
		t.Fatalf("Notification events %+v, want one", evs)
	}
	f := evs[0].Fields
	if f.NotificationType != hookwire.NotePermissionRequest || f.Message != "Bash: touch approved.txt (needs to leave the sandbox)" ||
		f.SessionID != "01a24e54-4072-75a0-9354-63dc7879b986" {
		t.Fatalf("the Notification: type %q, message %q, session %q", f.NotificationType, f.Message, f.SessionID)
	}
}

// TestAppServerFailuresAreNamedAsTheHookNamesThem: a failed turn/completed
// on the app server with no StopFailure from the hook is named from its
// words (Capabilities.FailureName = ClassifyError) and classified by the
// driver's table. The words are the ones Codex 0.171.0's app server put in
// turn/completed's error against each stand-in fault (the recorded
// artifact, docs/codex.md "Failures"); each must get the class the tmux
// path's hook gives the same fault (TestE2E's outages).
func TestAppServerFailuresAreNamedAsTheHookNamesThem(t *testing.T) {
	want := map[string]machine.Class{"auth": machine.ClassMeans, "billing": machine.ClassProvider,
		"rate-limit": machine.ClassProvider, "server": machine.ClassTransient, "unavailable": machine.ClassTransient}
	b, err := os.ReadFile(filepath.Join("testdata", "appserver-0.171.0-2026-12-05", "failures.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var row struct {
			Fault string `json:"fault"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		class, ok := want[row.Fault]
		if !ok {
			t.Fatalf("a recorded fault %q with no expected class", row.Fault)
		}
		seen++
		name := codex.Adapter{}.Caps().FailureName(row.Error.Message)
		if got, cause := hookwire.ClassifyFailure(name, row.Error.Message); got != class {
			t.Errorf("%s: %q named %s, classified %s (%s), want %s", row.Fault, row.Error.Message, name, got, cause, class)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d recorded failures, want one per fault (%d)", seen, len(want))
	}
}
