package telemetry_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
)

func TestMissingRecordsAreUnknownWithNullsNeverZero(t *testing.T) {
	f := newFixture(t)
	f.bareSeat("fresh") // seat.toml only: never started, never sent to
	row, err := telemetry.ReadSeat(f.home, "fresh", t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range row.Readings() {
		switch r.Name {
		case "harness", "shape", "transport":
			continue // declared identity: seat.toml exists
		case "provider_waits":
			// providers.toml is where every refusal is recorded (by the driver
			// that saw it): its absence is a recorded "no block", said so.
			if r.Meta.State != telemetry.Known || !strings.Contains(r.Meta.Why, "providers.toml absent") {
				t.Errorf("provider_waits: %+v", r.Meta)
			}
			continue
		}
		if r.Meta.State != telemetry.Unknown {
			t.Errorf("%s: state %q, want unknown (%+v)", r.Name, r.Meta.State, r.Meta)
		}
		if r.Meta.Why == "" {
			t.Errorf("%s: unknown without a reason", r.Name)
		}
	}
	m := asJSON(t, row)
	for _, p := range []string{"heartbeat.phase", "heartbeat.age_seconds", "context.occupancy", "context.floor",
		"context.window", "inbox.depth", "cursor.closed", "model.value", "session.id", "health.verdict",
		"ladder.rung", "in_flight.id", "last_turn_end.at"} {
		v, ok := lookup(m, p)
		if !ok {
			t.Errorf("%s: key missing from the JSON (the schema always carries it)", p)
		} else if v != nil {
			t.Errorf("%s = %v, want null for an unknown reading", p, v)
		}
	}
	cells := row.Cells()
	// A seat with no records at all was never started: said so, not unknown.
	if got := cells["health"].Text; got != "never started" {
		t.Errorf("health cell %q", got)
	}
	if got := cells["intent"].Text; got != "never started" {
		t.Errorf("intent cell %q", got)
	}
	for _, k := range []string{"phase", "context", "inbox", "cursor", "model"} {
		if got := cells[k].Text; got != "unknown" {
			t.Errorf("%s cell %q, want unknown (never 0 or idle)", k, got)
		}
	}
}

func lookup(m map[string]any, path string) (any, bool) {
	parts := strings.Split(path, ".")
	var v any = m
	for _, k := range parts {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func TestHeartbeatFreshKnownOldStaleWithAge(t *testing.T) {
	f := newFixture(t)
	s := f.seat("beat")
	heartbeat(t, s, t0.Add(-10*time.Second), "idle")
	row, _ := telemetry.ReadSeat(f.home, "beat", t0)
	if row.Heartbeat.State != telemetry.Known || *row.Heartbeat.Phase != "idle" || *row.Heartbeat.AgeSeconds != 10 {
		t.Fatalf("fresh heartbeat: %+v", row.Heartbeat)
	}

	heartbeat(t, s, t0.Add(-5*time.Minute), "idle")
	row, _ = telemetry.ReadSeat(f.home, "beat", t0)
	hb := row.Heartbeat
	if hb.State != telemetry.Stale {
		t.Fatalf("5-minute-old heartbeat with a 30s interval: state %q, want stale", hb.State)
	}
	if hb.AgeSeconds == nil || *hb.AgeSeconds != 300 {
		t.Errorf("age %v, want 300", hb.AgeSeconds)
	}
	if !strings.Contains(hb.Why, "5m0s ago") || !strings.Contains(hb.Why, "30s") {
		t.Errorf("why %q should give the age and the declared interval", hb.Why)
	}
	if got := row.Cells()["phase"].Text; got != "stale: idle" {
		t.Errorf("phase cell %q, want the last phase marked stale", got)
	}
	if got := row.Cells()["heartbeat"].Text; got != "stale 5m00s" {
		t.Errorf("heartbeat cell %q", got)
	}
}

func TestContextOlderThanLastTurnEndIsStale(t *testing.T) {
	f := newFixture(t)
	s := f.seat("ctx")
	session(t, s, "sess-a")
	write(t, s, contextPath(s), state.Context{SessionID: "sess-a", Occupancy: 50000, Floor: 12000, Reclaimable: 38000,
		Window: 200000, Source: "status line", FloorSource: "first request of a fresh session", ReadAt: t0.Add(-time.Minute)})

	row, _ := telemetry.ReadSeat(f.home, "ctx", t0)
	c := row.Context
	if c.State != telemetry.Known || *c.Floor != 12000 || *c.Reclaimable != 38000 || *c.Window != 200000 || *c.Step != 25 {
		t.Fatalf("context with no later turn end: %+v", c)
	}

	// A turn end of ANOTHER session in this seat's events does not make it stale.
	event(t, s, hookwire.EvStop, t0.Add(-30*time.Second), map[string]any{"session_id": "sess-other", "prompt_id": "p0"}, true)
	if row, _ = telemetry.ReadSeat(f.home, "ctx", t0); row.Context.State != telemetry.Known {
		t.Fatalf("a Stop of another session made the context %s: %s", row.Context.State, row.Context.Why)
	}

	ev := event(t, s, hookwire.EvStop, t0.Add(-20*time.Second), map[string]any{"session_id": "sess-a", "prompt_id": "p1"}, true)
	row, _ = telemetry.ReadSeat(f.home, "ctx", t0)
	c = row.Context
	if c.State != telemetry.Stale {
		t.Fatalf("context read before the last turn end: state %q, want stale", c.State)
	}
	if c.Occupancy == nil || *c.Occupancy != 50000 {
		t.Errorf("a stale reading keeps its values: %+v", c)
	}
	if !strings.Contains(c.Why, "before the last turn end") {
		t.Errorf("why %q", c.Why)
	}
	if row.LastTurnEnd.State != telemetry.Known || !strings.Contains(row.LastTurnEnd.Bound, ev) {
		t.Errorf("last turn end %+v should be bound to event %s", row.LastTurnEnd, ev)
	}
	if !strings.HasPrefix(row.Cells()["context"].Text, "stale: 25%") {
		t.Errorf("context cell %q", row.Cells()["context"].Text)
	}
}

func TestModelIsTheHarnessRecordNeverSeatToml(t *testing.T) {
	f := newFixture(t)
	s := f.seat("mdl", `model = "declared-a"`)
	session(t, s, "sess-m")

	// No record from the harness: unknown, not seat.toml's model.
	row, _ := telemetry.ReadSeat(f.home, "mdl", t0)
	if row.Model.State != telemetry.Unknown || row.Model.Value != nil {
		t.Fatalf("no harness record: model %+v, want unknown", row.Model)
	}

	// The harness's SessionStart says B.
	ev := event(t, s, hookwire.EvSessionStart, t0.Add(-50*time.Minute), map[string]any{"session_id": "sess-m", "source": "startup", "model": "recorded-b"}, true)
	row, _ = telemetry.ReadSeat(f.home, "mdl", t0)
	if row.Model.Value == nil || *row.Model.Value != "recorded-b" {
		t.Fatalf("model %+v, want recorded-b from the SessionStart event", row.Model)
	}
	if !strings.Contains(row.Model.Bound, ev) || !strings.Contains(row.Model.Bound, "session_id matches") {
		t.Errorf("bound %q should name the event and the session match", row.Model.Bound)
	}
	if row.Session.ConfirmedBy == nil || !strings.Contains(*row.Session.ConfirmedBy, ev) {
		t.Errorf("session not confirmed by %s: %+v", ev, row.Session)
	}

	// A later status-line reading (context.toml) says C: the newest record wins.
	write(t, s, contextPath(s), state.Context{SessionID: "sess-m", Occupancy: 1000, Window: 200000, Source: "status line",
		ReadAt: t0.Add(-time.Minute), Model: "recorded-c"})
	row, _ = telemetry.ReadSeat(f.home, "mdl", t0)
	if row.Model.Value == nil || *row.Model.Value != "recorded-c" || !strings.Contains(row.Model.Bound, "context.toml") {
		t.Fatalf("model %+v, want recorded-c from context.toml", row.Model)
	}
	if strings.Contains(asString(t, row), "declared-a") {
		t.Errorf("seat.toml's declared model leaked into the reading")
	}
}

func asString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTwoSessionsInOneWorkdirEachBoundByItsOwnID(t *testing.T) {
	f := newFixture(t)
	a, b := f.seat("alpha"), f.seat("beta") // the same workdir
	session(t, a, "sess-alpha")
	session(t, b, "sess-beta")
	// beta's reading, and a status line and SessionStart of beta's session, end up in alpha's directory.
	write(t, a, contextPath(a), state.Context{SessionID: "sess-beta", Occupancy: 90000, Window: 200000, Model: "model-beta", ReadAt: t0})
	if err := os.WriteFile(a.StatusLinePath(), []byte(`{"session_id":"sess-beta","model":{"id":"model-beta"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	event(t, a, hookwire.EvSessionStart, t0.Add(-time.Minute), map[string]any{"session_id": "sess-beta", "model": "model-beta"}, true)
	write(t, b, contextPath(b), state.Context{SessionID: "sess-beta", Occupancy: 90000, Window: 200000, Model: "model-beta", ReadAt: t0})

	rows, err := telemetry.Read(f.home, t0)
	if err != nil || len(rows) != 2 {
		t.Fatalf("Read: %v, %d rows", err, len(rows))
	}
	ra, rb := rows[0], rows[1]
	if ra.Context.State != telemetry.Unknown || ra.Context.Occupancy != nil || !strings.Contains(ra.Context.Why, "not taken") {
		t.Errorf("alpha took a reading of another session: %+v", ra.Context)
	}
	if ra.Model.State != telemetry.Unknown || ra.Model.Value != nil {
		t.Errorf("alpha took another session's model: %+v", ra.Model)
	}
	if ra.Session.ConfirmedBy != nil {
		t.Errorf("alpha's session confirmed by another session's SessionStart: %v", *ra.Session.ConfirmedBy)
	}
	if rb.Context.State != telemetry.Known || *rb.Context.Occupancy != 90000 || !strings.Contains(rb.Context.Bound, "sess-beta") {
		t.Errorf("beta's own reading: %+v", rb.Context)
	}
	if rb.Model.Value == nil || *rb.Model.Value != "model-beta" {
		t.Errorf("beta's model: %+v", rb.Model)
	}
}

func TestSessionBindingNamesHowTheIDWasChosen(t *testing.T) {
	f := newFixture(t)
	s := f.seat("bind")
	session(t, s, "sess-b")
	row, _ := telemetry.ReadSeat(f.home, "bind", t0)
	if !strings.Contains(row.Session.Bound, "pantty-chosen id: launch.toml passes --session-id sess-b") {
		t.Errorf("bound %q", row.Session.Bound)
	}
	// A harness that assigns its own id: the id is not on the argv.
	write(t, s, s.LaunchPath(), state.LaunchFile{Argv: []string{"codex"}, Dir: "/"})
	row, _ = telemetry.ReadSeat(f.home, "bind", t0)
	if !strings.Contains(row.Session.Bound, "recorded by the driver from the harness") {
		t.Errorf("bound %q", row.Session.Bound)
	}
}

func TestInboxDepthInFlightAndCursor(t *testing.T) {
	f := newFixture(t)
	s := f.seat("inbox")
	session(t, s, "sess-i")
	for i, id := range []string{"m1", "m2", "m3", "m4"} {
		if _, err := s.Enqueue(guard.Message{ID: id, Text: "hello " + id}, 0, t0.Add(time.Duration(i-10)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	done := inbox.Status{ID: "m1", State: inbox.StateProcessed, SessionID: "sess-i", TurnEnd: "1-1-Stop.json", EndedAt: t0.Add(-5 * time.Minute)}
	write(t, s, filepath.Join(s.StatusDir(), "m1.toml"), done)
	write(t, s, filepath.Join(s.StatusDir(), "m2.toml"), inbox.Status{ID: "m2", State: inbox.StateSubmitted, Attempts: 1,
		SessionID: "sess-i", SubmittedAt: t0.Add(-42 * time.Second)})
	write(t, s, s.CursorPath(), inbox.Cursor{ID: "m1", State: inbox.StateProcessed, Closed: 1, ClosedBy: "1-1-Stop.json", Updated: t0.Add(-5 * time.Minute)})

	row, _ := telemetry.ReadSeat(f.home, "inbox", t0)
	if *row.Inbox.Depth != 3 || *row.Inbox.Queued != 2 || *row.Inbox.Processed != 1 {
		t.Errorf("inbox %+v", row.Inbox)
	}
	if row.InFlight.ID == nil || *row.InFlight.ID != "m2" || *row.InFlight.AgeSeconds != 42 {
		t.Errorf("in flight %+v", row.InFlight)
	}
	if row.Cursor.State != telemetry.Known || *row.Cursor.ID != "m1" || *row.Cursor.Closed != 1 {
		t.Errorf("cursor %+v", row.Cursor)
	}
	if row.LastTurnEnd.At == nil || !row.LastTurnEnd.At.Equal(t0.Add(-5*time.Minute)) {
		t.Errorf("last turn end %+v", row.LastTurnEnd)
	}
	// The seat stopped with m2 in flight: nothing moves it until a start,
	// which the cell says instead of an age that only grows.
	if err := s.SetIntent(state.IntentStopped, "seat stop"); err != nil {
		t.Fatal(err)
	}
	row, _ = telemetry.ReadSeat(f.home, "inbox", t0)
	if got := row.Cells()["in_flight"].Text; !strings.Contains(got, "m2 submitted") || !strings.Contains(got, "settled at its next start") {
		t.Errorf("in-flight cell of a stopped seat: %q", got)
	}

	// m2 finished but the driver died before moving the cursor: stale, not wrong.
	write(t, s, filepath.Join(s.StatusDir(), "m2.toml"), inbox.Status{ID: "m2", State: inbox.StateProcessed, SessionID: "sess-i", EndedAt: t0})
	row, _ = telemetry.ReadSeat(f.home, "inbox", t0)
	if row.Cursor.State != telemetry.Stale || !strings.Contains(row.Cursor.Why, "m2") {
		t.Errorf("cursor behind the message states: %+v", row.Cursor)
	}
	if row.InFlight.State != telemetry.Known || row.InFlight.ID != nil {
		t.Errorf("nothing in flight: %+v", row.InFlight)
	}
}

func TestCorruptRecordIsAnErrorNotADefault(t *testing.T) {
	f := newFixture(t)
	s := f.seat("bad")
	if err := os.WriteFile(s.HeartbeatPath(), []byte("at = 12\nphase = \"idle\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	row, _ := telemetry.ReadSeat(f.home, "bad", t0)
	if row.Heartbeat.State != telemetry.Error || row.Heartbeat.Phase != nil || !strings.Contains(row.Heartbeat.Why, "heartbeat.toml") {
		t.Errorf("corrupt heartbeat: %+v", row.Heartbeat)
	}
}

func TestRecoverRecordsAreReadWhenPresent(t *testing.T) {
	f := newFixture(t)
	s := f.seat("rec", `provider = "acme"`)
	session(t, s, "sess-r")
	row, _ := telemetry.ReadSeat(f.home, "rec", t0)
	if row.Health.State != telemetry.Unknown || row.Cells()["health"].Text != "unknown (no recover verdict)" {
		t.Fatalf("no health.toml: %+v", row.Health)
	}
	if row.ProviderWaits.State != telemetry.Known || len(row.ProviderWaits.Waits) != 0 {
		t.Fatalf("no providers.toml: %+v", row.ProviderWaits)
	}

	h := "at = 2026-08-10T11:59:00Z\nverdict = \"dead\"\nreason = \"no capability: oldest queued 31m\"\ncause = \"stale-heartbeat\"\nlaunches = 1\n"
	if err := os.WriteFile(filepath.Join(s.Dir, "health.toml"), []byte(h), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, s, s.RecoveryPath(), state.Recovery{Floor: "fallback", MeansFailures: 2, LastAt: t0.Add(-time.Minute)})
	blocks := state.Blocks{"acme": {Until: t0.Add(30 * time.Minute), Error: "rate_limit", Text: "resets in 30m", Parsed: true, Seat: "other"},
		"elsewhere": {Until: t0.Add(time.Hour), Error: "overloaded"}}
	if err := fsatomic.WriteState(state.HomeTmpDir(f.home), state.ProvidersPath(f.home), blocks); err != nil {
		t.Fatal(err)
	}
	row, _ = telemetry.ReadSeat(f.home, "rec", t0)
	if row.Health.Verdict == nil || *row.Health.Verdict != "dead" || !strings.Contains(row.Health.Why, "no capability") {
		t.Errorf("health %+v", row.Health)
	}
	if row.Ladder.Floor == nil || *row.Ladder.Floor != "fallback" || *row.Ladder.MeansFailures != 2 {
		t.Errorf("ladder %+v", row.Ladder)
	}
	w := row.ProviderWaits.Waits
	if len(w) != 1 || w[0].Provider != "acme" || !w[0].Until.Equal(t0.Add(30*time.Minute)) || !strings.Contains(w[0].Bound, "refused on seat other") {
		t.Errorf("waits %+v (only the seat's own provider's block applies)", w)
	}

	// recover stopped sweeping: its verdict goes stale.
	last := "at = 2026-08-10T11:00:00Z\ninterval = \"1m\"\n"
	if err := os.WriteFile(filepath.Join(f.home, "recover-last.toml"), []byte(last), 0o600); err != nil {
		t.Fatal(err)
	}
	row, _ = telemetry.ReadSeat(f.home, "rec", t0.Add(10*time.Minute))
	if row.Health.State != telemetry.Stale {
		t.Errorf("an 11-minute-old verdict with a 1m interval: %+v", row.Health)
	}
}

func TestUnknownSeatAndBadName(t *testing.T) {
	f := newFixture(t)
	if _, err := telemetry.ReadSeat(f.home, "nobody", t0); !errors.Is(err, state.ErrUnknownSeat) {
		t.Errorf("unknown seat: %v", err)
	}
	if _, err := telemetry.ReadSeat(f.home, "../x", t0); !errors.Is(err, state.ErrBadInput) {
		t.Errorf("bad name: %v", err)
	}
	rows, err := telemetry.Read(f.home, t0) // no seats/ at all
	if err != nil || len(rows) != 0 {
		t.Errorf("empty root: %v %v", rows, err)
	}
}

func TestReadingWritesNothing(t *testing.T) {
	f := newFixture(t)
	s := f.seat("quiet")
	session(t, s, "sess-q")
	heartbeat(t, s, t0, "idle")
	before := tree(t, f.home)
	if _, err := telemetry.Read(f.home, t0); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, f.home); after != before {
		t.Errorf("reading changed the state directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// tree lists every path under root with its size and modification time.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String() + "\n")
		return nil
	})
	return b.String()
}
