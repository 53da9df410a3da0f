package gates

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/gemini"
	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

const dayLen = 24 * time.Hour

// shippedRegistry decodes the embedded registry or fails the test.
func shippedRegistry(t *testing.T) *Registry {
	t.Helper()
	r, err := Shipped()
	if err != nil {
		t.Fatalf("the shipped registry does not decode strictly: %v", err)
	}
	return r
}

// entry returns the shipped entry of a harness (its first range).
func entry(t *testing.T, r *Registry, harness string) Entry {
	t.Helper()
	e, _ := r.find(harness, "")
	if e == nil {
		t.Fatalf("no registry entry for %s", harness)
	}
	return *e
}

// The table's questions, in the seed's order (compaction first), each with the
// seed's own consequence; then the dispatch gate.
var wantTable = []struct{ name, consequence string }{
	{"compaction", "Run turn-spawned"},
	{"cancel", "Run turn-spawned with a supervisor ceiling"},
	{"context", "Do not automate resident compaction policy"},
	{"completion", "Do not advance the cursor or declare health"},
	{"continuity", "The simpler seat shape may be the better fit"},
	{"dispatch", "Do not paste board text on this path: re-measure"},
}

func checkTable(t *testing.T, v Verdict) {
	t.Helper()
	if len(v.Gates) != len(wantTable) {
		t.Fatalf("%d gates, want %d", len(v.Gates), len(wantTable))
	}
	for i, w := range wantTable {
		if g := v.Gates[i]; g.Name != w.name || g.Consequence != w.consequence {
			t.Errorf("gate %d: %s (%q), want %s (%q)", i+1, g.Name, g.Consequence, w.name, w.consequence)
		}
	}
}

func statuses(v Verdict) map[string]Status {
	m := map[string]Status{}
	for _, g := range v.Gates {
		m[g.Name] = g.Status
	}
	return m
}

func all(s Status) map[string]Status {
	m := map[string]Status{}
	for _, w := range wantTable {
		m[w.name] = s
	}
	return m
}

func TestShippedRegistryCoversEveryHarnessAndTheGuard(t *testing.T) {
	r := shippedRegistry(t)
	if got, want := r.Harnesses(), []string{"sim", "claude-code", "codex", "gemini-cli"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("registry harnesses %v, want %v", got, want)
	}
	for _, a := range []harness.Adapter{sim.Adapter{}, claudecode.Adapter{}, codex.Adapter{}, gemini.Adapter{}} {
		entry(t, r, a.Name())
		// The adapter's shipped predicate must close what the registry says
		// dispatches.
		d, f := entry(t, r, a.Name()).Dispatch, a.Facts()
		for _, c := range d.Sigils {
			if !strings.ContainsRune(f.Sigils, c) {
				t.Errorf("%s: registry sigil %q is not closed by the adapter's facts (%q)", a.Name(), c, f.Sigils)
			}
		}
	}
	// The shipped guard must close at least what the registry says dispatches.
	for _, h := range []string{"sim", "claude-code"} {
		d := entry(t, r, h).Dispatch
		if d.Form != guard.DefaultDispatchFacts.Form {
			t.Errorf("%s: registry form %q, the guard ships %q", h, d.Form, guard.DefaultDispatchFacts.Form)
		}
		for _, c := range d.Sigils {
			if !strings.ContainsRune(guard.DefaultDispatchFacts.Sigils, c) {
				t.Errorf("%s: registry sigil %q is not closed by the shipped guard (%q)", h, c, guard.DefaultDispatchFacts.Sigils)
			}
		}
	}
}

// The registry is decoded strictly: an unknown key, a missing row or a partial
// set of dates is an error, never a default.
func TestRegistryDecodeIsStrict(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"unknown key", `title = "pantty sim`, `titel = "pantty sim`, `unknown key "harness.titel"`},
		{"unknown row key", "status = \"met\"\nhow = \"one Escape", "status = \"met\"\nnote = \"x\"\nhow = \"one Escape", `unknown key`},
		{"missing row", "[harness.cancel]\nstatus = \"met\"\nhow = \"one Escape cancels the turn; the driver verifies the busy footer is gone and clears the composer\"\nsources = [\"seat/intake_crash_test.go TestCancelSlowTurn\", \"harness/sim/tui_test.go TestEscapeCancelsTurn\"]\n", "", "[harness.cancel]: missing"},
		{"bad status", "[harness.cancel]\nstatus = \"met\"", "[harness.cancel]\nstatus = \"yes\"", `status = "yes"`},
		{"missing fail_after", "fail_after = 2028-12-02\n", "", "as_of, revisit and fail_after are all required"},
		{"partial row dates", "revisit = 2027-01-01\nfail_after = 2027-03-02\nhow = \"a pasted", "revisit = 2027-01-01\nhow = \"a pasted", "all three"},
		{"dates out of order", "revisit = 2027-12-02", "revisit = 2029-12-02", "fail_after 2028-12-02 is before revisit"},
		{"met row without sources", "sources = [\"seat/compact_test.go TestContextSplitsFloorAndReclaimable\"]\n", "", "needs its sources"},
		{"bad range", `versions = "2.1.328"`, `versions = "2.1.*"`, `versions = "2.1.*"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := string(shipped)
			if !strings.Contains(text, c.old) {
				t.Fatalf("the shipped registry no longer contains %q", c.old)
			}
			_, err := Parse("test.toml", []byte(strings.Replace(text, c.old, c.new, 1)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestSimPassesEveryGate(t *testing.T) {
	r := shippedRegistry(t)
	e := entry(t, r, "sim")
	v := r.Evaluate("sim", "", nil, e.AsOf.Add(dayLen))
	checkTable(t, v)
	if got := statuses(v); !reflect.DeepEqual(got, all(Pass)) {
		t.Fatalf("sim gates %v, want all pass: %+v", got, v.Gates)
	}
	if !v.ResidentAllowed || !v.AutoCompaction || v.Summary != "resident allowed" {
		t.Fatalf("sim verdict: resident %v, auto-compaction %v, %q", v.ResidentAllowed, v.AutoCompaction, v.Summary)
	}
	if !strings.Contains(v.VersionNote, "not observed") {
		t.Errorf("an unobserved version must be said: %q", v.VersionNote)
	}
}

// Codex 0.171.x was measured on the tmux path through harness/codex (2026-12-02):
// every gate passes, the dispatch row records the measured trimmed-first-char
// predicate with its artifacts, and the guard takes it.
func TestCodexMeasuredOnTheTmuxPath(t *testing.T) {
	r := shippedRegistry(t)
	e := entry(t, r, "codex")
	v := r.Evaluate("codex", "0.171.0", nil, e.AsOf.Add(dayLen))
	checkTable(t, v)
	if got := statuses(v); !reflect.DeepEqual(got, all(Pass)) {
		t.Fatalf("codex gates %v, want all pass", got)
	}
	if !v.ResidentAllowed || !v.AutoCompaction {
		t.Fatalf("codex verdict: %+v", v)
	}
	if d := e.Dispatch; d.Form != guard.FormTrimmedFirstChar || d.Sigils != "/!" || !d.ControlOK ||
		!strings.Contains(d.Artifacts, "harness/codex/testdata/") {
		t.Fatalf("codex dispatch row %+v", d)
	}
	// A version no entry covers is unmeasured — 0.171.1 too: only what was
	// measured is covered — and says which exist and the command that
	// measures it.
	v = r.Evaluate("codex", "0.171.1", nil, e.AsOf.Add(dayLen))
	if g := v.Gate("compaction"); v.ResidentAllowed || !strings.Contains(g.Reason, "(have 0.171.0)") ||
		!strings.Contains(g.Fix, "pantty measure contract --harness codex") {
		t.Fatalf("codex 0.200.1: %+v", v.Gate("compaction"))
	}
}

// Dates decide: past revisit every gate warns (and still passes); past fail_after
// every gate fails and residency is ruled out.
func TestExpiredRegistry(t *testing.T) {
	r := shippedRegistry(t)
	e := entry(t, r, "claude-code")

	v := r.Evaluate("claude-code", "2.1.328", nil, e.Revisit.Add(dayLen))
	if got := statuses(v); !reflect.DeepEqual(got, all(Warn)) {
		t.Fatalf("past revisit: %v, want all warn", got)
	}
	if !v.ResidentAllowed || !strings.Contains(v.Gate("compaction").Reason, "past its revisit date") {
		t.Fatalf("past revisit: resident %v, compaction %q", v.ResidentAllowed, v.Gate("compaction").Reason)
	}

	v = r.Evaluate("claude-code", "2.1.328", nil, e.FailAfter.Add(dayLen))
	if got := statuses(v); !reflect.DeepEqual(got, all(Fail)) {
		t.Fatalf("past fail_after: %v, want all fail", got)
	}
	if v.ResidentAllowed || !strings.Contains(v.Gate("compaction").Reason, "past its fail_after") {
		t.Fatalf("past fail_after: resident %v, compaction %q", v.ResidentAllowed, v.Gate("compaction").Reason)
	}
}

// localFacts is a measurement as `pantty measure dispatch` writes it, with its
// artifacts on disk.
func localFacts(t *testing.T, harness, build string, asOf time.Time) *state.FactsFile {
	t.Helper()
	art := filepath.Join(t.TempDir(), "artifacts")
	if err := os.MkdirAll(art, 0o700); err != nil {
		t.Fatal(err)
	}
	obs := []state.Observation{
		{Name: "clear-control", Input: "/clear", Door: "raw", Dispatched: true},
		{Name: "slash", Input: "/context", Door: "board", ReachedModel: true},
	}
	for i := range obs {
		obs[i].Artifact = filepath.Join(art, obs[i].Door+"-"+obs[i].Name+".txt")
		if err := os.WriteFile(obs[i].Artifact, []byte("evidence\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &state.FactsFile{Harness: harness, Build: build, Shape: config.ShapeResident,
		Path: "tmux 3.3a: load-buffer + paste-buffer -p (bracketed) + settle + send-keys Enter, pantty driver",
		Form: guard.FormFirstChar, Sigils: "/!", AsOf: asOf, Revisit: asOf.Add(30 * dayLen), FailAfter: asOf.Add(90 * dayLen),
		ControlOK: true, Artifacts: art, Observations: obs}
}

// A fresh local measurement covers a dispatch row past its fail_after; it covers
// nothing else (the other rows have no local measurement).
func TestFreshLocalFactsCoverAnExpiredDispatchRow(t *testing.T) {
	r := shippedRegistry(t)
	e := entry(t, r, "claude-code")
	now := e.Dispatch.FailAfter.Add(10 * dayLen)
	if g := r.Evaluate("claude-code", "2.1.328", nil, now).Gate("dispatch"); g.Status != Fail {
		t.Fatalf("expired dispatch row without a local measurement: %s (%s)", g.Status, g.Reason)
	}
	f := localFacts(t, "claude-code", "2.1.328 (Claude Code)", now.Add(-dayLen))
	v := r.Evaluate("claude-code", "2.1.328", f, now)
	g := v.Gate("dispatch")
	if g.Status != Pass || !strings.Contains(g.Reason, "measured locally") || !strings.Contains(g.Reason, "covers the registry's row") {
		t.Fatalf("dispatch with fresh local facts: %s (%s)", g.Status, g.Reason)
	}
	if v.Gate("compaction").Status != Fail || v.ResidentAllowed {
		t.Fatalf("a dispatch measurement must not cover compaction: %s, resident %v", v.Gate("compaction").Status, v.ResidentAllowed)
	}
	// The same holds where the registry has no dispatch answer at all (codex).
	c := entry(t, r, "codex")
	if g := r.Evaluate("codex", "0.171.0", localFacts(t, "codex", "codex-cli 0.171.0", c.AsOf), c.AsOf.Add(dayLen)).Gate("dispatch"); g.Status != Pass {
		t.Fatalf("codex dispatch with a local measurement: %s (%s)", g.Status, g.Reason)
	}
}

// Local facts the driver would use but that cannot vouch for this path: the
// dispatch gate fails (not counted) or, when the guard holds everything back, warns.
func TestLocalFactsThatDoNotCount(t *testing.T) {
	r := shippedRegistry(t)
	e := entry(t, r, "claude-code")
	now := e.Dispatch.FailAfter.Add(10 * dayLen) // the registry's row cannot help
	cases := []struct {
		name    string
		version string
		edit    func(f *state.FactsFile)
		want    Status
		reason  string
	}{
		{"control did not dispatch", "", func(f *state.FactsFile) { f.ControlOK = false }, Fail, "its control did not dispatch"},
		{"another harness", "", func(f *state.FactsFile) { f.Harness = "sim" }, Fail, `measured harness "sim"`},
		{"another path", "", func(f *state.FactsFile) { f.Shape = config.ShapeTurn }, Fail, `the "turn" path`},
		{"another build", "2.1.328", func(f *state.FactsFile) { f.Build = "2.1.400 (Claude Code)" }, Fail, "not version 2.1.328"},
		{"undated", "", func(f *state.FactsFile) { f.FailAfter = time.Time{} }, Fail, "not dated"},
		{"artifacts gone", "", func(f *state.FactsFile) { os.RemoveAll(f.Artifacts) }, Fail, "artifacts directory"},
		{"an artifact gone", "", func(f *state.FactsFile) { os.Remove(f.Observations[0].Artifact) }, Fail, "raw/clear-control is missing"},
		{"no raw control recorded", "", func(f *state.FactsFile) { f.Observations = f.Observations[1:] }, Fail, "no control is recorded"},
		{"past its own fail_after", "", func(f *state.FactsFile) {
			f.AsOf, f.Revisit, f.FailAfter = now.Add(-100*dayLen), now.Add(-70*dayLen), now.Add(-dayLen)
		}, Fail, "past its fail_after"},
		{"past its own revisit", "", func(f *state.FactsFile) { f.Revisit = now.Add(-dayLen) }, Warn, "past its revisit date"},
		{"a form the guard does not implement", "", func(f *state.FactsFile) { f.Form = "line-start" }, Warn, "holds all board text back"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := localFacts(t, "claude-code", "2.1.328 (Claude Code)", now.Add(-dayLen))
			c.edit(f)
			g := r.Evaluate("claude-code", c.version, f, now).Gate("dispatch")
			if g.Status != c.want || !strings.Contains(g.Reason, c.reason) {
				t.Fatalf("got %s (%s), want %s with %q", g.Status, g.Reason, c.want, c.reason)
			}
			if g.Status == Fail && !strings.Contains(g.Reason, "not counted") {
				t.Fatalf("a refused measurement must say it is not counted: %s", g.Reason)
			}
		})
	}
	// Within the registry's dates a local file whose control did not dispatch still
	// fails: the driver takes the local file first and refuses to start on it.
	f := localFacts(t, "claude-code", "2.1.328 (Claude Code)", e.AsOf)
	f.ControlOK = false
	if g := r.Evaluate("claude-code", "", f, e.AsOf.Add(dayLen)).Gate("dispatch"); g.Status != Fail {
		t.Fatalf("control not dispatched, fresh registry: %s (%s)", g.Status, g.Reason)
	}
}

func TestVersions(t *testing.T) {
	for build, want := range map[string]string{
		"2.1.328 (Claude Code)": "2.1.328", "pantty sim (sim-0.1)": "0.1", "codex-cli 0.171.0": "0.171.0", "unknown": "",
	} {
		if got := VersionOf(build); got != want {
			t.Errorf("VersionOf(%q) = %q, want %q", build, got, want)
		}
	}
	cases := []struct {
		versions, version string
		want              bool
	}{
		{"*", "", true}, {"*", "9", true},
		{"2.1.x", "2.1.328", true}, {"2.1.x", "2.1", false}, {"2.1.x", "2.10.1", false}, {"2.1.x", "", false},
		{"0.171.x", "0.171.0", true}, {"2.1.328", "2.1.328", true}, {"2.1.328", "2.1.3", false},
	}
	for _, c := range cases {
		if got := (Entry{Versions: c.versions}).Covers(c.version); got != c.want {
			t.Errorf("%q covers %q = %v, want %v", c.versions, c.version, got, c.want)
		}
	}
}

// writeRegistry writes the shipped registry with edits applied (each old text
// must be present) and points $PANTTY_GATES_REGISTRY at it for this test.
func writeRegistry(t *testing.T, edits ...string) string {
	t.Helper()
	text := string(shipped)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("the shipped registry no longer contains %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	p := filepath.Join(t.TempDir(), "registry.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(RegistryEnv, p)
	return p
}

// The first entry is the simulator, so the first match of a row is its row.
const (
	simCompactionMet = "[harness.compaction]\nstatus = \"met\""
	simContextMet    = "[harness.context]\nstatus = \"met\""
	simResumeMet     = "[harness.resume]\nstatus = \"met\""
)

func TestCheckStartActsOnEachConsequence(t *testing.T) {
	home := t.TempDir()
	cfg := config.Config{Name: "s", Harness: "sim", Shape: config.ShapeResident, Refresh: config.RefreshConfig{Policy: config.RefreshNone}}
	now := time.Now()

	t.Run("compaction fails: resident refused", func(t *testing.T) {
		writeRegistry(t, simCompactionMet, "[harness.compaction]\nstatus = \"unmet\"")
		_, _, err := CheckStart(home, cfg, now)
		ref, ok := err.(*Refusal)
		if !ok || ref.Gate != "compaction" || !strings.Contains(err.Error(), "the compaction gate fails for sim") ||
			!strings.Contains(err.Error(), `shape = "turn"`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("context fails: an automated policy refused, a manual one warned", func(t *testing.T) {
		writeRegistry(t, simContextMet, "[harness.context]\nstatus = \"unmeasured\"")
		auto := cfg
		auto.Refresh = config.RefreshConfig{Policy: config.RefreshContext, Threshold: 0.5}
		_, _, err := CheckStart(home, auto, now)
		if ref, ok := err.(*Refusal); !ok || ref.Gate != "context" || !strings.Contains(err.Error(), `policy = "none"`) {
			t.Fatalf("automated policy: got %v", err)
		}
		v, warnings, err := CheckStart(home, cfg, now)
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "context gate fails") || !v.ResidentAllowed || v.AutoCompaction {
			t.Fatalf("manual policy: err %v, warnings %q, verdict %+v", err, warnings, v)
		}
	})
	t.Run("continuity fails: a warning only", func(t *testing.T) {
		writeRegistry(t, simResumeMet, "[harness.resume]\nstatus = \"unmeasured\"")
		_, warnings, err := CheckStart(home, cfg, now)
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "simpler seat shape") {
			t.Fatalf("err %v, warnings %q", err, warnings)
		}
	})
	t.Run("a broken registry override fails closed", func(t *testing.T) {
		writeRegistry(t, "schema = 1", "schema = 1\nextra = true")
		_, _, err := CheckStart(home, cfg, now)
		if err == nil || !strings.Contains(err.Error(), "unknown key") {
			t.Fatalf("got %v", err)
		}
	})
}
