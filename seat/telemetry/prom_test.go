package telemetry_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
)

// sample is one parsed line of the Prometheus text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseProm parses the exposition format strictly enough to catch a malformed
// line: HELP and TYPE before a family's samples, quoted and escaped labels,
// a float value.
func parseProm(t *testing.T, text string) (samples []sample, help, typ map[string]string) {
	t.Helper()
	help, typ = map[string]string{}, map[string]string{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(why string) { t.Fatalf("line %d %q: %s", i+1, line, why) }
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, h, _ := strings.Cut(rest, " ")
			help[name] = h
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, ty, _ := strings.Cut(rest, " ")
			if help[name] == "" {
				fail("TYPE before HELP")
			}
			typ[name] = ty
			continue
		}
		brace := strings.IndexByte(line, '{')
		if brace < 0 {
			// A family of the state root (recover's figures) has no labels.
			name, value, ok := strings.Cut(line, " ")
			v, err := strconv.ParseFloat(value, 64)
			if !ok || err != nil || typ[name] == "" {
				fail("bad unlabelled sample")
			}
			samples = append(samples, sample{name: name, labels: map[string]string{}, value: v})
			continue
		}
		s := sample{name: line[:brace], labels: map[string]string{}}
		if typ[s.name] == "" {
			fail("sample before its TYPE line")
		}
		rest := line[brace+1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				fail("bad label")
			}
			key := strings.TrimPrefix(rest[:eq], ",")
			rest = rest[eq+2:]
			var val strings.Builder
			for {
				if rest == "" {
					fail("unterminated label value")
				}
				c := rest[0]
				rest = rest[1:]
				if c == '"' {
					break
				}
				if c == '\\' {
					switch rest[0] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(rest[0])
					}
					rest = rest[1:]
					continue
				}
				val.WriteByte(c)
			}
			s.labels[key] = val.String()
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(rest, "}")), 64)
		if err != nil {
			fail(err.Error())
		}
		s.value = v
		samples = append(samples, s)
	}
	return samples, help, typ
}

func find(samples []sample, name, seatName string, extra ...string) []sample {
	return findGlobal(samples, name, append([]string{"seat", seatName}, extra...)...)
}

func TestPrometheusOmitsUnknownSamplesInsteadOfZero(t *testing.T) {
	f := newFixture(t)
	known := f.seat("known")
	session(t, known, "sess-k")
	heartbeat(t, known, t0.Add(-3*time.Second), "idle")
	write(t, known, contextPath(known), state.Context{SessionID: "sess-k", Occupancy: 20000, Window: 200000, ReadAt: t0})
	f.bareSeat("blank") // nothing recorded

	rows, err := telemetry.Read(f.home, t0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := telemetry.WritePrometheus(&b, rows); err != nil {
		t.Fatal(err)
	}
	samples, help, typ := parseProm(t, b.String())
	for _, s := range samples {
		for _, l := range []string{"seat", "harness", "shape"} {
			if _, ok := s.labels[l]; !ok {
				t.Errorf("%s: no %s label", s.name, l)
			}
		}
		want := "gauge"
		if strings.HasSuffix(s.name, "_total") {
			want = "counter"
		}
		if typ[s.name] != want || help[s.name] == "" {
			t.Errorf("%s: TYPE %q HELP %q", s.name, typ[s.name], help[s.name])
		}
	}
	if got := find(samples, "pantty_seat_heartbeat_age_seconds", "known"); len(got) != 1 || got[0].value != 3 {
		t.Errorf("known seat's heartbeat age: %+v", got)
	}
	if got := find(samples, "pantty_seat_context_occupancy_tokens", "known"); len(got) != 1 || got[0].value != 20000 {
		t.Errorf("known seat's occupancy: %+v", got)
	}
	// The floor of the known seat was never measured: no sample, not 0.
	if got := find(samples, "pantty_seat_context_floor_tokens", "known"); len(got) != 0 {
		t.Errorf("unmeasured floor written as %+v", got)
	}
	for _, name := range []string{"pantty_seat_heartbeat_age_seconds", "pantty_seat_heartbeat_stale", "pantty_seat_phase",
		"pantty_seat_context_occupancy_tokens", "pantty_seat_context_window_tokens", "pantty_seat_inbox_depth",
		"pantty_seat_cursor_closed", "pantty_seat_driver_live", "pantty_seat_health", "pantty_seat_model_info",
		"pantty_seat_last_turn_end_timestamp_seconds"} {
		if got := find(samples, name, "blank"); len(got) != 0 {
			t.Errorf("%s written for a seat with no record: %+v", name, got)
		}
	}
	if got := find(samples, "pantty_seat_reading_state", "blank", "reading", "context", "state", "unknown"); len(got) != 1 || got[0].value != 1 {
		t.Errorf("the unknown context is not reported as unknown: %+v", got)
	}
	if got := find(samples, "pantty_seat_info", "blank"); len(got) != 1 || got[0].labels["harness"] != "sim" || got[0].labels["shape"] != "resident" {
		t.Errorf("info: %+v", got)
	}
}

func TestWriteTextfileIsAtomicAndParses(t *testing.T) {
	f := newFixture(t)
	s := f.seat("tf")
	heartbeat(t, s, t0, "idle")
	rows, _ := telemetry.Read(f.home, t0)
	dir := t.TempDir()
	path := filepath.Join(dir, "pantty.prom")
	for i := 0; i < 2; i++ { // the second write replaces the first
		if err := telemetry.WriteTextfile(path, rows); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	samples, _, _ := parseProm(t, string(data))
	if len(find(samples, "pantty_seat_phase", "tf", "phase", "idle")) != 1 {
		t.Errorf("textfile lacks the phase:\n%s", data)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("textfile directory holds %v, want only pantty.prom (no temp file left)", names)
	}
}

// TestTextfileHasTimestampsNotFrozenAges: the textfile form drops the age
// families and keeps the timestamps; with the state root it carries recover's
// sweep figures and when it was written.
func TestTextfileHasTimestampsNotFrozenAges(t *testing.T) {
	f := newFixture(t)
	s := f.seat("ts")
	heartbeat(t, s, t0.Add(-3*time.Second), "idle")
	sweep := "at = 2026-12-03T09:00:00Z\ntook = \"1.5s\"\npid = 1\ninterval = \"1m0s\"\nseats = 3\nok = 2\ndead = 1\nunknown = 0\nrevived = 1\nexit_code = 1\n"
	if err := os.WriteFile(filepath.Join(f.home, telemetry.LastSweepFile), []byte(sweep), 0o600); err != nil {
		t.Fatal(err)
	}
	rows, err := telemetry.Read(f.home, t0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "pantty.prom")
	if err := telemetry.WriteTextfileWith(path, rows, telemetry.PromOptions{Home: f.home, Now: t0}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	samples, _, _ := parseProm(t, string(data))
	if got := find(samples, "pantty_seat_heartbeat_age_seconds", "ts"); len(got) != 0 {
		t.Errorf("the textfile carries a frozen age: %+v", got)
	}
	if got := find(samples, "pantty_seat_heartbeat_timestamp_seconds", "ts"); len(got) != 1 || got[0].value != float64(t0.Add(-3*time.Second).Unix()) {
		t.Errorf("heartbeat timestamp: %+v", got)
	}
	want := map[string]float64{"pantty_recover_last_sweep_duration_seconds": 1.5, "pantty_recover_interval_seconds": 60,
		"pantty_recover_last_sweep_revived": 1, "pantty_recover_last_sweep_exit_code": 1, "pantty_exposition_timestamp_seconds": float64(t0.Unix())}
	for name, v := range want {
		if got := findGlobal(samples, name); len(got) != 1 || got[0].value != v {
			t.Errorf("%s: %+v, want %v", name, got, v)
		}
	}
	if got := findGlobal(samples, "pantty_recover_last_sweep_seats", "verdict", "dead"); len(got) != 1 || got[0].value != 1 {
		t.Errorf("seats by verdict: %+v", got)
	}
	// The live form keeps the age.
	var b bytes.Buffer
	telemetry.WritePrometheus(&b, rows)
	if live, _, _ := parseProm(t, b.String()); len(find(live, "pantty_seat_heartbeat_age_seconds", "ts")) != 1 {
		t.Errorf("status --format prom lost the age")
	}
}

// TestAlertRulesNameExistingMetrics keeps examples/prometheus-alerts.yml in
// step with the families: every pantty_* name it uses is written by pantty.
func TestAlertRulesNameExistingMetrics(t *testing.T) {
	rules, err := os.ReadFile("../../examples/prometheus-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	s := f.seat("al")
	heartbeat(t, s, t0, "idle")
	os.WriteFile(filepath.Join(f.home, telemetry.LastSweepFile), []byte("at = 2026-12-03T09:00:00Z\ninterval = \"1m0s\"\n"), 0o600)
	rows, _ := telemetry.Read(f.home, t0)
	var b bytes.Buffer
	telemetry.WritePrometheusWith(&b, rows, telemetry.PromOptions{Home: f.home, Now: t0})
	_, help, _ := parseProm(t, b.String())
	names := regexp.MustCompile(`pantty_[a-z_]+`).FindAllString(string(rules), -1)
	if len(names) < 10 {
		t.Fatalf("found only %d metric names in the rules", len(names))
	}
	for _, n := range names {
		if help[n] == "" {
			t.Errorf("the alert rules use %s, which pantty does not write", n)
		}
	}
	// Prometheus's own checker, where it is installed (Debian's prometheus
	// package ships it; the suite does not install it).
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(promtool, "check", "rules", "../../examples/prometheus-alerts.yml").CombinedOutput(); err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
	} else {
		t.Log("promtool is not installed: the rules' syntax is checked by the names above only")
	}
}

// findGlobal returns the samples of name with the given labels, seat or not.
func findGlobal(ss []sample, name string, kv ...string) []sample {
	var out []sample
next:
	for _, s := range ss {
		if s.name != name {
			continue
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if s.labels[kv[i]] != kv[i+1] {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// TestCountersAddThePrunedTally: the _total families are the prune's tally
// plus the final messages still stored, typed counter.
func TestCountersAddThePrunedTally(t *testing.T) {
	f := newFixture(t)
	s := f.seat("counted")
	session(t, s, "sess-c") // a launched seat: the ladder reading needs launch.toml
	for i, id := range []string{"m1", "m2", "m3"} {
		if _, err := s.Enqueue(guard.Message{ID: id, Text: "work " + id}, 0, t0.Add(time.Duration(i-10)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	write(t, s, filepath.Join(s.StatusDir(), "m1.toml"), inbox.Status{ID: "m1", State: inbox.StateProcessed, EndedAt: t0})
	write(t, s, filepath.Join(s.StatusDir(), "m2.toml"), inbox.Status{ID: "m2", State: inbox.StateFailed, Reason: inbox.ReasonWorkError, EndedAt: t0})
	// m1 is also named as counted by a prune that was cut short: counted once.
	write(t, s, s.TallyPath(), inbox.Tally{Processed: 40, Failed: map[string]int{inbox.ReasonWorkError: 2, inbox.ReasonCancelled: 1}, Pruning: []string{"m1"}})
	write(t, s, s.RecoveryPath(), state.Recovery{Revived: 3})

	rows, err := telemetry.Read(f.home, t0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := telemetry.WritePrometheus(&b, rows); err != nil {
		t.Fatal(err)
	}
	samples, _, typ := parseProm(t, b.String())
	for name, want := range map[string]float64{"pantty_seat_messages_processed_total": 40, "pantty_seat_recoveries_total": 3} {
		if got := find(samples, name, "counted"); len(got) != 1 || got[0].value != want || typ[name] != "counter" {
			t.Errorf("%s: %+v (TYPE %q), want %v", name, got, typ[name], want)
		}
	}
	for reason, want := range map[string]float64{inbox.ReasonWorkError: 3, inbox.ReasonCancelled: 1} {
		if got := find(samples, "pantty_seat_messages_failed_total", "counted", "reason", reason); len(got) != 1 || got[0].value != want {
			t.Errorf("failed_total{reason=%s}: %+v, want %v", reason, got, want)
		}
	}
}

// TestGrafanaDashboardNamesExistingMetrics keeps examples/grafana-dashboard.json
// importable and in step with the families: it is JSON, it has the host
// variable, and every pantty_* name in its expressions is written by pantty.
func TestGrafanaDashboardNamesExistingMetrics(t *testing.T) {
	data, err := os.ReadFile("../../examples/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct{ Name string }
		}
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON Grafana can import: %v", err)
	}
	hasHost := false
	for _, v := range dash.Templating.List {
		hasHost = hasHost || v.Name == "host"
	}
	if !hasHost {
		t.Error("the dashboard has no host variable")
	}
	f := newFixture(t)
	heartbeat(t, f.seat("gd"), t0, "idle")
	os.WriteFile(filepath.Join(f.home, telemetry.LastSweepFile), []byte("at = 2026-12-03T09:00:00Z\ninterval = \"1m0s\"\n"), 0o600)
	rows, _ := telemetry.Read(f.home, t0)
	var b bytes.Buffer
	telemetry.WritePrometheusWith(&b, rows, telemetry.PromOptions{Home: f.home, Now: t0})
	_, help, _ := parseProm(t, b.String())
	exprs := 0
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			exprs++
			if !strings.Contains(q.Expr, `instance=~"$host"`) {
				t.Errorf("panel %q: %s does not follow the host variable", p.Title, q.Expr)
			}
			for _, n := range regexp.MustCompile(`pantty_[a-z_]+`).FindAllString(q.Expr, -1) {
				if help[n] == "" {
					t.Errorf("panel %q uses %s, which pantty does not write", p.Title, n)
				}
			}
		}
	}
	if exprs < 8 {
		t.Errorf("found only %d expressions in the dashboard", exprs)
	}
}
