package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// seed is one committed seed input of a fuzz target: the known hazards of the
// parser it feeds. args are in the target's parameter order.
type seed struct {
	name string
	args []any
}

// A seat.toml that validates (workdir /usr exists everywhere the tests run, and
// holds no test's state root: a workdir that holds one is refused).
const goodSeatTOML = `name = "fz"
harness = "sim"
workdir = "/usr"
`

func cfg(extra string) []any { return []any{[]byte(goodSeatTOML + extra)} }

func stateSeed(kind string, text string) []any {
	for i, k := range stateKinds {
		if k.name == kind {
			return []any{uint8(i), []byte(text)}
		}
	}
	panic("no state kind " + kind)
}

func hook(mode uint8, payload string) []any { return []any{mode, []byte(payload)} }

// reliabilitySeeds are the committed seed corpora (testdata/fuzz/<Target>/seed-*).
var reliabilitySeeds = map[string][]seed{
	"FuzzSeatConfig": {
		{"minimal", cfg("")},
		{"full", cfg("shape = \"resident\"\nturn_ceiling = \"20s\"\nheartbeat_interval = \"1s\"\nmax_message_bytes = 1024\nsubmit_retries = 2\n[tmux]\nsocket = \"/tmp/s\"\n[env]\nPANTTY_SIM_TURN = \"20ms\"\n[compaction]\ntimeout = \"1m\"\n[refresh]\npolicy = \"fixed\"\nevery = 3\n")},
		{"unknown-key", cfg("surprise = 1\n")},
		{"unknown-key-in-table", cfg("[tmux]\nsokcet = \"x\"\n")},
		{"unknown-key-inline-table", cfg("tmux = { socket = \"x\", extra = 1 }\n")},
		{"unknown-key-quoted-dotted", cfg("\"a.b\" = 1\n")},
		{"unknown-key-dotted", cfg("tmux.extra = 1\n")},
		{"unknown-array-table", cfg("[[ladder]]\nname = \"top\"\nbogus = 1\n")},
		{"duplicate-key", cfg("harness = \"sim\"\n")},
		{"duration-no-unit", cfg("heartbeat_interval = \"30\"\n")},
		{"duration-negative", cfg("heartbeat_interval = \"-1s\"\n")},
		{"duration-zero", cfg("heartbeat_interval = \"0s\"\nturn_ceiling = \"0s\"\n")},
		{"duration-huge", cfg("turn_ceiling = \"2562047h47m16.854775807s\"\n")},
		{"duration-overflow", cfg("turn_ceiling = \"9999999999h\"\n")},
		{"duration-as-integer", cfg("heartbeat_interval = 30\n")},
		{"name-mismatch", []any{[]byte("name = \"other\"\nharness = \"sim\"\nworkdir = \"/usr\"\n")}},
		{"name-traversal", []any{[]byte("name = \"../fz\"\nharness = \"sim\"\nworkdir = \"/usr\"\n")}},
		{"harness-unknown", []any{[]byte("name = \"fz\"\nharness = \"bash\"\nworkdir = \"/usr\"\n")}},
		{"workdir-relative", []any{[]byte("name = \"fz\"\nharness = \"sim\"\nworkdir = \"tmp\"\n")}},
		{"workdir-file", []any{[]byte("name = \"fz\"\nharness = \"sim\"\nworkdir = \"/etc/hostname\"\n")}},
		{"workdir-missing", []any{[]byte("name = \"fz\"\nharness = \"sim\"\n")}},
		{"env-reserved-home", cfg("[env]\nPANTTY_HOME = \"/x\"\n")},
		{"env-reserved-seat", cfg("[env]\nPANTTY_SEAT = \"other\"\n")},
		{"env-reserved-tmux", cfg("[env]\nTMUX = \"/tmp/x,1,0\"\n")},
		{"env-bad-name", cfg("[env]\n\"A-B\" = \"x\"\n")},
		{"env-not-string", cfg("[env]\nA = 1\n")},
		{"pass-env-reserved", cfg("pass_env = [\"PANTTY_HOME\"]\n")},
		{"max-bytes-over", cfg("max_message_bytes = 262145\n")},
		{"max-bytes-negative", cfg("max_message_bytes = -1\n")},
		{"retries-over", cfg("submit_retries = 99\n")},
		{"refresh-fixed-no-every", cfg("[refresh]\npolicy = \"fixed\"\n")},
		{"refresh-context-threshold", cfg("[refresh]\npolicy = \"context\"\nthreshold = 1.5\n")},
		{"refresh-context-nan", cfg("[refresh]\npolicy = \"context\"\nthreshold = nan\n")},
		{"relay-bad", cfg("relay = \"on\"\n")},
		{"bom", []any{[]byte("\ufeff" + goodSeatTOML)}},
		{"crlf", []any{[]byte(strings.ReplaceAll(goodSeatTOML, "\n", "\r\n"))}},
		{"nul", []any{[]byte(goodSeatTOML + "model = \"a\x00b\"\n")}},
		{"invalid-utf8", []any{[]byte(goodSeatTOML + "model = \"\xff\xfe\"\n")}},
		{"truncated", []any{[]byte(goodSeatTOML[:30])}},
		{"table-twice", cfg("[tmux]\n[tmux]\n")},
		{"empty", []any{[]byte("")}},
	},
	"FuzzReadState": {
		{"status-ok", stateSeed("status", "id = \"m1\"\nstate = \"processed\"\nattempts = 1\nresubmits = 0\nretries = 0\nupdated_at = 2026-01-02T03:04:05Z\n")},
		{"status-truncated", stateSeed("status", "id = \"m1\"\nstate = \"proc")},
		{"status-unknown-key", stateSeed("status", "id = \"m1\"\nstate = \"queued\"\nsurprise = true\n")},
		{"status-wrong-type", stateSeed("status", "attempts = \"one\"\n")},
		{"status-int-overflow", stateSeed("status", "attempts = 99999999999999999999\n")},
		{"status-time-no-zone", stateSeed("status", "updated_at = 2026-01-02T03:04:05\n")},
		{"status-date-only", stateSeed("status", "updated_at = 2026-01-02\n")},
		{"status-time-far", stateSeed("status", "not_before = 9999-12-31T23:59:59Z\n")},
		{"status-time-offset", stateSeed("status", "not_before = 2026-01-02T03:04:05+14:00\n")},
		{"cursor-ok", stateSeed("cursor", "seq = 1\nid = \"m1\"\nstate = \"processed\"\nclosed_by = \"x\"\nclosed = 1\nupdated = 2026-01-02T03:04:05Z\n")},
		{"cursor-negative", stateSeed("cursor", "seq = -1\nclosed = -5\n")},
		{"session-ok", stateSeed("session", "harness = \"sim\"\nid = \"x\"\ngeneration = 1\nsocket = \"/tmp/s\"\npane_pid = 5\n")},
		{"session-truncated-table", stateSeed("session", "harness = \"sim\"\n[tmu")},
		{"session-binary", stateSeed("session", "\x00\x01\x02\xff")},
		{"owner-ok", stateSeed("owner", "holder = \"h-1\"\npid = 5\npid_start = 7\nhost = \"h\"\nstarted = 2026-01-02T03:04:05Z\n")},
		{"owner-pid-negative", stateSeed("owner", "pid = -1\n")},
		{"owner-pid-start-negative", stateSeed("owner", "pid_start = -1\n")},
		{"intent-ok", stateSeed("intent", "want = \"running\"\nat = 2026-01-02T03:04:05Z\nby = \"seat start\"\n")},
		{"intent-bom", stateSeed("intent", "\ufeffwant = \"running\"\n")},
		{"intent-crlf", stateSeed("intent", "want = \"running\"\r\nby = \"x\"\r\n")},
		{"heartbeat-ok", stateSeed("heartbeat", "at = 2026-01-02T03:04:05Z\nphase = \"idle\"\ninterval = \"30s\"\npid = 5\nholder = \"h\"\n")},
		{"heartbeat-interval-zero", stateSeed("heartbeat", "interval = \"0s\"\n")},
		{"heartbeat-interval-negative", stateSeed("heartbeat", "interval = \"-30s\"\n")},
		{"heartbeat-interval-int", stateSeed("heartbeat", "interval = 30\n")},
		{"context-ok", stateSeed("context", "occupancy = 100\nfloor = 10\nreclaimable = 90\nwindow = 200000\nsource = \"statusline\"\nread_at = 2026-01-02T03:04:05Z\n")},
		{"context-float", stateSeed("context", "occupancy = 1.5\n")},
		{"cycle-ok", stateSeed("cycle", "id = \"c1\"\nstate = \"requested\"\nrequested = 2026-01-02T03:04:05Z\n")},
		{"mode-ok", stateSeed("mode", "mode = \"relay\"\nsince = 2026-01-02T03:04:05Z\nclients = [\"1\", \"2\"]\n")},
		{"mode-clients-mixed", stateSeed("mode", "clients = [\"1\", 2]\n")},
		{"inject-ok", stateSeed("inject", "session_id = \"x\"\nhash = \"h\"\nat = 2026-01-02T03:04:05Z\n")},
		{"recovery-ok", stateSeed("recovery", "floor = \"\"\nmeans_failures = 0\nfailures = 2\nnext_attempt = 2026-01-02T03:04:05Z\nrevived = 1\n")},
		{"cleanup-ok", stateSeed("cleanup", "requested_at = 2026-01-02T03:04:05Z\nby = \"seat done\"\nattempts = 0\n")},
		{"activity-ok", stateSeed("activity", "tool = \"Bash\"\nwhat = \"ls\"\nphase = \"pre\"\nat = 2026-01-02T03:04:05Z\n")},
		{"launch-ok", stateSeed("launch", "argv = [\"pantty\", \"sim\"]\ndir = \"/tmp\"\n[env]\nA = \"b\"\n")},
		{"launch-env-dotted", stateSeed("launch", "argv = []\n[env]\n\"a.b\" = \"c\"\n")},
		{"request-ok", stateSeed("request", "id = \"c1\"\nkind = \"stop\"\nfrom_pid = 5\nat = 2026-01-02T03:04:05Z\n")},
		{"request-unknown-key", stateSeed("request", "id = \"c1\"\nkind = \"command\"\ncommand = \"compact\"\nrun = \"rm -rf /\"\n")},
		{"result-ok", stateSeed("result", "id = \"c1\"\nok = true\nat = 2026-01-02T03:04:05Z\n")},
		{"providers-ok", stateSeed("providers", "[sim]\nuntil = 2026-01-02T03:04:05Z\nsince = 2026-01-02T03:00:00Z\nerror = \"rate_limit\"\ntext = \"x\"\nparsed = true\nseat = \"a\"\n")},
		{"providers-unknown-key", stateSeed("providers", "[sim]\nuntil = 2026-01-02T03:04:05Z\nhow = 1\n")},
		{"providers-not-table", stateSeed("providers", "sim = 1\n")},
		{"providers-weird-name", stateSeed("providers", "[\"../x\"]\nuntil = 2026-01-02T03:04:05Z\n")},
		{"facts-ok", stateSeed("facts", "harness = \"sim\"\nform = \"first-char\"\nsigils = \"/!\"\n[[observation]]\n")},
		{"inbox-msg-ok", stateSeed("inbox-msg", `{"id":"m1","from":"alice","text":"hi","seq":1,"enqueued_at":"2026-01-02T03:04:05Z"}`)},
		{"inbox-msg-id-mismatch", stateSeed("inbox-msg", `{"id":"m2","text":"hi","seq":1}`)},
		{"inbox-msg-truncated", stateSeed("inbox-msg", `{"id":"m1","text":"hi`)},
		{"inbox-msg-null", stateSeed("inbox-msg", `null`)},
		{"event-ok", stateSeed("event", `{"event":"Stop","received_at":"2026-01-02T03:04:05Z","payload":{"session_id":"s","prompt_id":"p"}}`)},
		{"event-payload-string", stateSeed("event", `{"event":"Unknown","received_at":"2026-01-02T03:04:05Z","payload":"not json"}`)},
		{"event-payload-wrong-type", stateSeed("event", `{"event":"Stop","payload":{"session_id":5}}`)},
		{"event-truncated", stateSeed("event", `{"event":"Stop","payl`)},
		{"event-empty", stateSeed("event", ``)},
	},
	"FuzzHook": {
		{"user-prompt-submit", hook(0, `{"hook_event_name":"UserPromptSubmit","session_id":"4f8d2c1e-5b6a-4c3d-9e8f-7a6b5c4d3e2f","prompt_id":"p1","prompt":"[pantty] msg=m1 nonce=0123456789ab mentions=0\n<<<pantty-0123456789ab\nhi\npantty-0123456789ab>>>"}`)},
		{"stop", hook(0, `{"hook_event_name":"Stop","session_id":"s","prompt_id":"p1","last_assistant_message":"sim: received 2 chars"}`)},
		{"stop-failure-429", hook(0, `{"hook_event_name":"StopFailure","session_id":"s","prompt_id":"p1","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429) · resets in 1s"}`)},
		{"session-start-compact", hook(0, `{"hook_event_name":"SessionStart","session_id":"s","source":"compact"}`)},
		{"session-start-startup", hook(0, `{"hook_event_name":"SessionStart","session_id":"s","source":"startup"}`)},
		{"pre-compact", hook(0, `{"hook_event_name":"PreCompact","session_id":"s","trigger":"manual"}`)},
		{"pre-compact-auto", hook(0, `{"hook_event_name":"PreCompact","session_id":"s","trigger":"auto","custom_instructions":null}`)},
		{"post-compact", hook(0, `{"hook_event_name":"PostCompact","session_id":"s","trigger":"manual","compact_summary":"x"}`)},
		{"pre-tool-use", hook(0, `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"export API_KEY=sk-ant-secret; ls"}}`)},
		{"pre-tool-use-no-tool", hook(0, `{"hook_event_name":"PreToolUse"}`)},
		{"event-name-traversal", hook(0, `{"hook_event_name":"../../owner","session_id":"s"}`)},
		{"event-name-long", hook(0, `{"hook_event_name":"`+strings.Repeat("A", 300)+`"}`)},
		{"event-name-unicode", hook(0, `{"hook_event_name":"Stöp"}`)},
		{"wrong-types", hook(0, `{"hook_event_name":"Stop","session_id":5,"prompt_id":["x"],"stop_hook_active":"yes"}`)},
		{"not-json", hook(0, `this is not json`)},
		{"json-array", hook(0, `[1,2,3]`)},
		{"json-null", hook(0, `null`)},
		{"empty", hook(0, ``)},
		{"nul-bytes", hook(0, "{\"hook_event_name\":\"Stop\",\"x\":\"\x00\"}\x00")},
		{"invalid-utf8", hook(0, "{\"hook_event_name\":\"Stop\",\"last_assistant_message\":\"\xff\xfe\"}")},
		{"deep-nesting", hook(0, `{"hook_event_name":"Stop","x":`+strings.Repeat("[", 2000)+strings.Repeat("]", 2000)+`}`)},
		{"duplicate-name", hook(0, `{"hook_event_name":"Stop","hook_event_name":"PreCompact"}`)},
		{"status-line", hook(1, `{"session_id":"s","model":{"id":"sim-1"},"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":12000}}}`)},
		{"status-line-null-usage", hook(1, `{"session_id":"s","context_window":{"context_window_size":200000,"current_usage":null}}`)},
		{"status-line-garbage", hook(1, `{"context_window":7}`)},
		{"pane-died", hook(2, ``)},
		{"client-attached", hook(3, `x`)},
		{"client-detached", hook(4, `{}`)},
	},
	"FuzzParseStatusLine": {
		{"ok", []any{[]byte(`{"session_id":"s","model":{"id":"m"},"context_window":{"context_window_size":200000,"current_usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":12000}}}`)}},
		{"null-usage", []any{[]byte(`{"context_window":{"current_usage":null}}`)}},
		{"negative", []any{[]byte(`{"context_window":{"current_usage":{"input_tokens":-5}}}`)}},
		{"overflow", []any{[]byte(`{"context_window":{"current_usage":{"input_tokens":9223372036854775807,"cache_read_input_tokens":9223372036854775807}}}`)}},
		{"float", []any{[]byte(`{"context_window":{"current_usage":{"input_tokens":1.5}}}`)}},
		{"cumulative-only", []any{[]byte(`{"context_window":{"total_input_tokens":999999}}`)}},
		{"model-string", []any{[]byte(`{"model":"sim-1"}`)}},
		{"not-json", []any{[]byte(`nope`)}},
	},
	"FuzzParseReset": {
		{"relative", []any{"API Error: Request rejected (429) · resets in 2h 5m", int64(1767225600), int16(0)}},
		{"relative-1s", []any{"resets in 1s", int64(1767225600), int16(60)}},
		{"relative-days", []any{"try again in 3 days", int64(1767225600), int16(0)}},
		{"relative-huge", []any{"try again in 99999999999999999999 days", int64(1767225600), int16(0)}},
		{"relative-fraction", []any{"resets in 0.5h and 30m", int64(1767225600), int16(0)}},
		{"retry-after", []any{"retry-after: 120", int64(1767225600), int16(0)}},
		{"retry-after-huge", []any{"retry after 999999 seconds", int64(1767225600), int16(0)}},
		{"iso-z", []any{"resets at 2026-01-02T15:04:05Z", int64(1767225600), int16(0)}},
		{"iso-past", []any{"resets at 2001-01-02T15:04:05Z", int64(1767225600), int16(0)}},
		{"iso-far", []any{"resets at 9999-12-31T23:59:59Z", int64(1767225600), int16(0)}},
		{"iso-offset", []any{"resets at 2026-01-01 01:00 +14:00", int64(1767225600), int16(-720)}},
		{"iso-bad-month", []any{"resets at 2026-13-45T99:99:99Z", int64(1767225600), int16(0)}},
		{"epoch", []any{"limit reached|1767229200", int64(1767225600), int16(0)}},
		{"epoch-ms", []any{"limit reached|1767229200000", int64(1767225600), int16(0)}},
		{"epoch-implausible", []any{"request id 4000000000", int64(1767225600), int16(0)}},
		{"clock-pm", []any{"resets 3pm", int64(1767225600), int16(0)}},
		{"clock-zone", []any{"resets 3:45pm (Europe/Paris)", int64(1767225600), int16(0)}},
		{"clock-zone-traversal", []any{"resets 3pm (../../../etc/passwd)", int64(1767225600), int16(0)}},
		{"clock-zone-unknown", []any{"resets 3pm (Mars/Olympus)", int64(1767225600), int16(0)}},
		{"clock-24", []any{"resets at 15:45", int64(1767225600), int16(330)}},
		{"clock-bad", []any{"resets at 25:61", int64(1767225600), int16(0)}},
		{"clock-bare", []any{"resets at 3", int64(1767225600), int16(0)}},
		{"clock-dst-gap", []any{"resets 2:30am (America/New_York)", int64(1772953200), int16(0)}},
		{"none", []any{"API Error: Overloaded (529)", int64(1767225600), int16(0)}},
		{"empty", []any{"", int64(0), int16(0)}},
		{"now-zero", []any{"resets in 5m", int64(0), int16(0)}},
		{"now-negative", []any{"resets in 5m", int64(-9223372036854775808), int16(-32768)}},
	},
}

// encodeSeed renders one seed in the `go test fuzz v1` format.
func encodeSeed(args []any) string {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(v))
		case uint8:
			fmt.Fprintf(&b, "byte(%s)\n", strconv.QuoteRune(rune(v)))
		case int64:
			fmt.Fprintf(&b, "int64(%d)\n", v)
		case int16:
			fmt.Fprintf(&b, "int16(%d)\n", v)
		default:
			panic(fmt.Sprintf("seed argument of type %T", a))
		}
	}
	return b.String()
}

// TestReliabilityFuzzSeedFiles keeps the committed seed corpora identical to
// reliabilitySeeds, so plain `go test` runs every hazard as a seed and
// `-fuzz` mutates from them. PANTTY_UPDATE_CORPUS=1 rewrites the files.
func TestReliabilityFuzzSeedFiles(t *testing.T) {
	t.Parallel()
	update := os.Getenv("PANTTY_UPDATE_CORPUS") == "1"
	targets := make([]string, 0, len(reliabilitySeeds))
	for k := range reliabilitySeeds {
		targets = append(targets, k)
	}
	sort.Strings(targets)
	for _, target := range targets {
		dir := filepath.Join("testdata", "fuzz", target)
		for _, s := range reliabilitySeeds[target] {
			path := filepath.Join(dir, "seed-"+s.name)
			want := encodeSeed(s.args)
			if update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("seed %s is missing or stale (run with PANTTY_UPDATE_CORPUS=1): %v", path, err)
			}
		}
	}
}
