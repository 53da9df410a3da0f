package state_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// The parsers every byte pantty reads from disk or from a harness goes through,
// fuzzed against the properties their callers rely on (docs/reliability.md):
//
//   - FuzzSeatConfig: seat.toml → LoadConfig. A bad file is ErrBadConfig naming
//     the file (an unknown key with its line); a good one has every default a
//     driver divides or ticks by in range.
//   - FuzzReadState: every state file type through ReadState (and the JSON
//     files through their readers). Never a panic, never "missing" for a file
//     that is there, the path in every error, and what is read can be written
//     back and read again to the same value.
//   - FuzzHook: `pantty hook` (hookrun.Run) with arbitrary stdin and mode. Exit 0
//     always, except PreCompact's deliberate 2; nothing printed on
//     UserPromptSubmit; exactly one event file, inside events/, readable.
//   - FuzzParseStatusLine: the status-line reading. Never negative, never an
//     overflowed sum.
//   - FuzzParseReset: the provider reset time. Never before now, never past the
//     cap, zero when not found.
//
// Plain `go test` runs each target's seed corpus (testdata/fuzz/<Target>/, the
// known hazards, kept by TestReliabilityFuzzSeedFiles); scripts/fuzz.sh runs
// them with -fuzz for a bounded time.

// fuzzSeat makes a seat directory with its seat.toml and a session, as a
// running seat has them.
func fuzzSeat(t *testing.T) state.Seat {
	t.Helper()
	s, err := state.Open(filepath.Join(t.TempDir(), "home"), "fz")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.ConfigPath(), []byte(goodSeatTOML), 0o600); err != nil {
		t.Fatal(err)
	}
	sess := state.Session{Harness: "sim", ID: "4f8d2c1e-5b6a-4c3d-9e8f-7a6b5c4d3e2f", Generation: 1, PaneID: "%1", PanePID: 1}
	if err := s.SessionFile().Write(sess); err != nil {
		t.Fatal(err)
	}
	return s
}

// bareSeat is a seat directory with only its tmp/: enough for a reader and a
// write-back, and a few times cheaper per input than fuzzSeat.
func bareSeat(t *testing.T) state.Seat {
	t.Helper()
	s, err := state.Open(filepath.Join(t.TempDir(), "home"), "fz")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.TmpDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	return s
}

func FuzzSeatConfig(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s := bareSeat(t)
		if err := os.WriteFile(s.ConfigPath(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := s.LoadConfig()
		if err != nil {
			if !errors.Is(err, state.ErrBadConfig) || !strings.Contains(err.Error(), s.ConfigPath()) {
				t.Fatalf("refusal is not ErrBadConfig naming the file: %v", err)
			}
			if strings.Contains(err.Error(), "unknown key") && !strings.Contains(err.Error(), ": line ") {
				t.Fatalf("an unknown key without its line: %v", err)
			}
			return
		}
		if c.Name != "fz" || !filepath.IsAbs(c.Workdir) {
			t.Fatalf("accepted name %q workdir %q", c.Name, c.Workdir)
		}
		if fi, err := os.Stat(c.Workdir); err != nil || !fi.IsDir() {
			t.Fatalf("accepted a workdir that is not a directory: %q", c.Workdir)
		}
		if c.MaxMessageBytes < 1 || c.MaxMessageBytes > guard.DefaultMaxMessageBytes {
			t.Fatalf("max_message_bytes %d", c.MaxMessageBytes)
		}
		if c.SubmitRetries < 1 || c.SubmitRetries > 20 {
			t.Fatalf("submit_retries %d", c.SubmitRetries)
		}
		// The driver ticks, waits and times out by these: zero or negative would
		// make a ticker panic or a wait never happen.
		for name, d := range map[string]time.Duration{"heartbeat_interval": c.HeartbeatInterval.Duration,
			"turn_ceiling": c.TurnCeiling.Duration, "ready_timeout": c.ReadyTimeout.Duration,
			"submit_timeout": c.SubmitTimeout.Duration, "compaction timeout": c.Compaction.Timeout.Duration} {
			if d <= 0 {
				t.Fatalf("accepted %s = %v", name, d)
			}
		}
		if c.PasteSettle.Duration < 0 {
			t.Fatalf("accepted paste_settle %v", c.PasteSettle.Duration)
		}
		for k := range c.Env {
			if k == config.HomeEnv || strings.HasPrefix(k, "PANTTY_SEAT") || strings.HasPrefix(k, "TMUX") {
				t.Fatalf("accepted the reserved env key %q", k)
			}
		}
	})
}

// stateKinds are the state files a reader decodes, by the name FuzzReadState's
// selector picks them with: where the file lives and pantty's own reader for it
// (a nil read means the file is JSON and read is its only check).
var stateKinds = []struct {
	name string
	path func(s state.Seat) string
	read func(s state.Seat) (any, error)
}{
	{"status", seatPath("inbox/status/m1.toml"), func(s state.Seat) (any, error) { return s.ReadStatus("m1") }},
	{"cursor", seatPath("cursor.toml"), func(s state.Seat) (any, error) { return s.CursorFile().Read() }},
	{"session", seatPath("session.toml"), func(s state.Seat) (any, error) { return s.SessionFile().Read() }},
	{"owner", seatPath("owner.toml"), func(s state.Seat) (any, error) { return s.OwnerFile().Read() }},
	{"intent", seatPath("intent.toml"), func(s state.Seat) (any, error) { return s.IntentFile().Read() }},
	{"heartbeat", seatPath("heartbeat.toml"), func(s state.Seat) (any, error) { return s.HeartbeatFile().Read() }},
	{"context", seatPath("context.toml"), func(s state.Seat) (any, error) { return s.ContextFile().Read() }},
	{"cycle", seatPath("handoff/cycle.toml"), func(s state.Seat) (any, error) { return s.CycleFile().Read() }},
	{"mode", seatPath("mode.toml"), func(s state.Seat) (any, error) { return s.ModeFile().Read() }},
	{"inject", seatPath("handoff/inject.toml"), func(s state.Seat) (any, error) { return s.InjectFile().Read() }},
	{"recovery", seatPath("recovery.toml"), func(s state.Seat) (any, error) { return s.RecoveryFile().Read() }},
	{"cleanup", seatPath("cleanup.toml"), func(s state.Seat) (any, error) { return s.CleanupFile().Read() }},
	{"activity", seatPath("activity.toml"), func(s state.Seat) (any, error) { return s.ActivityFile().Read() }},
	{"launch", seatPath("launch.toml"), func(s state.Seat) (any, error) { return s.LaunchFile().Read() }},
	{"request", seatPath("control/c1.toml"), readAs[state.Request]("control/c1.toml")},
	{"result", seatPath("control/done/c1.toml"), readAs[state.Result]("control/done/c1.toml")},
	{"providers", func(s state.Seat) string { return state.ProvidersPath(s.Home) },
		func(s state.Seat) (any, error) { return outage.ReadBlocks(s.Home) }},
	{"facts", func(s state.Seat) string { return state.FactsPath(s.Home, "sim", config.ShapeResident) },
		func(s state.Seat) (any, error) { return state.LoadFacts(s.Home, "sim", config.ShapeResident) }},
	{"inbox-msg", seatPath("inbox/msgs/m1.json"), nil},
	{"event", seatPath("events/1-1-Stop.json"), nil},
}

func seatPath(rel string) func(state.Seat) string {
	return func(s state.Seat) string { return filepath.Join(s.Dir, rel) }
}

// readAs reads a file that has no reader of its own with ReadState, as its
// readers in the driver do.
func readAs[T any](rel string) func(s state.Seat) (any, error) {
	return func(s state.Seat) (any, error) {
		var v T
		return v, state.ReadState(filepath.Join(s.Dir, rel), &v)
	}
}

func FuzzReadState(f *testing.F) {
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		k := stateKinds[int(kind)%len(stateKinds)]
		s := bareSeat(t)
		path := k.path(s)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var err error
		switch k.name {
		case "inbox-msg":
			_, err = s.ReadStored("m1")
		case "event":
			_, err = hookwire.ReadEvent(path)
		default:
			var v any
			v, err = k.read(s)
			if err == nil {
				roundTrip(t, s, path, k.read, v)
			}
		}
		if err == nil {
			return
		}
		if errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a file that is there read as missing (it would render as unknown, not corrupt): %v", err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("the error does not name the file: %v", err)
		}
		if strings.Contains(err.Error(), "unknown key") && !strings.Contains(err.Error(), ": line ") {
			t.Fatalf("an unknown key without its line: %v", err)
		}
	})
}

// roundTrip: what a reader accepted, the writer can store in its place and the
// reader read back to the same encoding (a driver rewrites the files it reads).
func roundTrip(t *testing.T, s state.Seat, path string, read func(state.Seat) (any, error), v any) {
	t.Helper()
	var first bytes.Buffer
	if err := toml.NewEncoder(&first).Encode(v); err != nil {
		t.Fatalf("read a value that cannot be written back: %v", err)
	}
	tmp := s.TmpDir()
	if !strings.HasPrefix(path, s.Dir+"/") {
		tmp = state.HomeTmpDir(s.Home)
	}
	if err := fsatomic.WriteState(tmp, path, v); err != nil {
		t.Fatalf("WriteState: %v", err)
	}
	w, err := read(s)
	if err != nil {
		t.Fatalf("a value pantty wrote does not read back: %v\n%s", err, first.String())
	}
	var second bytes.Buffer
	if err := toml.NewEncoder(&second).Encode(w); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Fatalf("round trip changed the value:\n%s\n---\n%s", first.String(), second.String())
	}
}

// hookModes are how `pantty hook` is invoked: by the harness (the event name in
// the payload), as the status line, or by a tmux hook.
var hookModes = []struct {
	statusLine bool
	tmux       string
}{{false, ""}, {true, ""}, {false, "pane-died"}, {false, "client-attached"}, {false, "client-detached"}}

func FuzzHook(f *testing.F) {
	f.Fuzz(func(t *testing.T, mode uint8, payload []byte) {
		m := hookModes[int(mode)%len(hookModes)]
		s := fuzzSeat(t)
		before := treeOf(t, s.Dir)
		var stdout, stderr bytes.Buffer
		var code int
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("hookrun.Run panicked: %v", r)
				}
			}()
			code = hookrun.Run(s.Home, s.Name, m.statusLine, m.tmux, bytes.NewReader(payload), &stdout, &stderr)
		}()
		var p struct {
			Event string `json:"hook_event_name"`
		}
		json.Unmarshal(payload, &p)
		harnessEvent := !m.statusLine && m.tmux == ""
		if code != 0 && !(code == 2 && harnessEvent && p.Event == hookwire.EvPreCompact) {
			t.Fatalf("exit %d (event %q): %s", code, p.Event, stderr.String())
		}
		if harnessEvent && p.Event == hookwire.EvUserPromptSubmit && stdout.Len() > 0 {
			t.Fatalf("printed %q on UserPromptSubmit: it would enter the model's context", stdout.String())
		}
		// Every file the hook made is one of the seat's own, and every event it
		// wrote is one readable file directly in events/.
		events := 0
		for p := range treeOf(t, s.Dir) {
			if before[p] {
				continue
			}
			rel, _ := filepath.Rel(s.Dir, p)
			switch {
			case filepath.Dir(rel) == "events" && strings.HasSuffix(rel, ".json"):
				events++
				ev, err := hookwire.ReadEvent(p)
				if err != nil && !strings.Contains(err.Error(), "payload") {
					t.Fatalf("the hook wrote an event its reader cannot read: %v", err)
				}
				if ev.Kind == "" {
					t.Fatalf("event %s has no kind", rel)
				}
			case rel == "statusline.json", rel == "activity.toml", strings.HasPrefix(rel, "handoff/"), strings.HasPrefix(rel, "tmp/"):
			default:
				t.Fatalf("the hook wrote %s", rel)
			}
		}
		isTool := harnessEvent && (p.Event == "PreToolUse" || p.Event == "PostToolUse")
		switch {
		case m.statusLine && events > 1, !m.statusLine && !isTool && events != 1, isTool && events != 0:
			t.Fatalf("%d event files for one hook run (mode %+v, event %q): %s", events, m, p.Event, stderr.String())
		}
	})
}

// treeOf lists every regular file under dir.
func treeOf(t *testing.T, dir string) map[string]bool {
	out := map[string]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out[p] = true
		}
		return nil
	})
	return out
}

func FuzzParseStatusLine(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		r, err := state.ParseStatusLine(payload)
		if err != nil {
			if r != (state.StatusReading{}) && !errors.Is(err, state.ErrNoUsage) {
				t.Fatalf("error %v with a reading %+v", err, r)
			}
			return
		}
		if r.Input < 0 || r.CacheCreation < 0 || r.CacheRead < 0 || r.Window < 0 {
			t.Fatalf("a negative token count read as a reading: %+v", r)
		}
		if r.Occupancy != r.Input+r.CacheCreation+r.CacheRead || r.Occupancy < r.Input || r.Occupancy < r.CacheRead {
			t.Fatalf("occupancy %d is not the sum of its parts (overflow?): %+v", r.Occupancy, r)
		}
	})
}

func FuzzParseReset(f *testing.F) {
	f.Fuzz(func(t *testing.T, text string, nowUnix int64, zoneMinutes int16) {
		// A plausible clock (1970–2400): the cap is relative to now, and a clock
		// at the end of time.Time's range is not a case pantty can meet.
		const span = 430 * 365 * 24 * 3600
		if nowUnix < 0 {
			nowUnix = -nowUnix
		}
		now := time.Unix(nowUnix%span, 0)
		loc := time.FixedZone("fz", int(zoneMinutes)%(18*60)*60)
		got, ok := outage.ParseReset(text, now, loc)
		if !ok {
			if !got.IsZero() {
				t.Fatalf("not found but returned %v", got)
			}
			return
		}
		if got.Before(now) || got.After(now.Add(config.MaxProviderWait)) {
			t.Fatalf("reset %v for now %v: outside [now, now+%v] (text %q)", got, now, config.MaxProviderWait, text)
		}
	})
}

// TestFuzzSeedsReachTheirTargets: the seed corpus reaches the interesting
// branches (a sanity check on the seeds, not on pantty).
func TestFuzzSeedsReachTheirTargets(t *testing.T) {
	t.Parallel()
	var accepted, refused int
	for _, seed := range reliabilitySeeds["FuzzSeatConfig"] {
		s := fuzzSeat(t)
		os.WriteFile(s.ConfigPath(), seed.args[0].([]byte), 0o600)
		if _, err := s.LoadConfig(); err == nil {
			accepted++
		} else {
			refused++
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("the seat.toml seeds should hold both good and bad files: %d accepted, %d refused", accepted, refused)
	}
	kinds := map[string]bool{}
	for _, seed := range reliabilitySeeds["FuzzReadState"] {
		kinds[stateKinds[int(seed.args[0].(uint8))%len(stateKinds)].name] = true
	}
	for _, k := range stateKinds {
		if !kinds[k.name] {
			t.Errorf("no seed for state file %s", k.name)
		}
	}
}
