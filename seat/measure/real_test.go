package measure_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/gemini"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// realHarness is one real harness the measurements run against, with its
// loopback stand-in: one table, so a new harness is one row.
type realHarness struct {
	ad      harness.Adapter
	version string
	binary  func() (string, error)
	// dispatch: the dispatch measurement completes on this harness today
	// and finds form first-char over '/' and '!'. Codex 0.171.0's raw path
	// does not complete (its first unrecognized /command stays in the input
	// box and every later raw input lands behind it; noted on the
	// measured-contract issue); Gemini CLI 0.61.0's does, but its corpus
	// measures form none (the corpus's unknown /context and a pasted ! reach
	// the model; only a known command such as the /compress control
	// dispatches). Their dispatch gates keep the registry's dated rows
	// (harness/codex/testdata, harness/gemini/testdata).
	dispatch bool
}

var realHarnesses = []realHarness{
	{claudecode.Adapter{}, claudecode.Version, claudecode.CachedBinary, true},
	{codex.Adapter{}, codex.Version, codex.CachedBinary, false},
	{gemini.Adapter{}, gemini.Version, gemini.CachedBinary, false},
}

// TestContractOnRealHarnesses runs the whole battery against each real
// harness binary (no key, no cost): every row measured and met, stored with
// its artifact under the version the binary says; and with the clock past
// the shipped registry's fail_after, the gates pass on these local facts.
// Claude Code also gets its dispatch measurement (form first-char, '/' and
// '!', the raw /clear control dispatched, nothing through the board door).
func TestContractOnRealHarnesses(t *testing.T) {
	t.Parallel() // beside the simulator's runs; the harnesses themselves one at a time
	if testing.Short() {
		t.Skip("the real-harness battery takes minutes; not in -short")
	}
	for _, h := range realHarnesses {
		t.Run(h.ad.Name(), func(t *testing.T) {
			bin, err := h.binary()
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%v (CI must install %s %s: scripts/test.sh)", err, h.ad.Name(), h.version)
				}
				t.Skipf("%v; run scripts/test.sh to install %s %s", err, h.ad.Name(), h.version)
			}
			home := tmuxtest.Dir(t)
			rig, err := h.ad.Caps().Measure(harness.MeasureSpec{Bin: bin, Dir: tmuxtest.Dir(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer rig.Close()
			past := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC) // the shipped rows fail after 2027-03-02
			// The injected clock: measured the day before past.
			o := measure.Options{Pantty: seattest.Binary(t), Now: past.Add(-24 * time.Hour), Revisit: 30 * 24 * time.Hour,
				Fail: 90 * 24 * time.Hour, Progress: func(l string) { t.Log(l) }}
			began := time.Now()
			c, err := measure.Contract(home, rig, o)
			if err != nil {
				t.Fatalf("contract: %v", err)
			}
			t.Logf("%s %s: battery in %s", c.Harness, c.Version, time.Since(began).Round(time.Second))
			if c.Version != h.version {
				t.Fatalf("measured version %q (%s), want %s", c.Version, c.Build, h.version)
			}
			// The drift detector: the registry pantty ships must say what the
			// battery measures on the pinned version, row by row.
			reg, err := gates.Shipped()
			if err != nil {
				t.Fatal(err)
			}
			entry, ok := reg.EntryFor(c.Harness, c.Version)
			if !ok {
				t.Fatalf("the shipped registry has no range covering the pinned %s %s", c.Harness, c.Version)
			}
			for _, r := range c.Rows {
				if !r.Met || r.Artifact == "" {
					t.Errorf("%s row: met %v, artifact %q: %s", r.Name, r.Met, r.Artifact, r.Value)
					if art, err := os.ReadFile(r.Artifact); err == nil {
						t.Logf("%s row's artifact:\n%s", r.Name, art)
					}
				}
				if _, err := os.Stat(r.Artifact); err != nil {
					t.Errorf("%s row's artifact: %v", r.Name, err)
				}
				if shipped := entry.RowStatus(r.Name); (shipped == gates.Met) != r.Met {
					t.Errorf("drift: the shipped registry (%s %s) says %s is %q; the battery measured met=%v on %s %s: %s",
						entry.Name, entry.Versions, r.Name, shipped, r.Met, c.Harness, c.Version, r.Value)
				}
			}
			if h.dispatch {
				f, err := measure.Run(home, rig, o)
				if err != nil {
					t.Fatalf("measure dispatch: %v", err)
				}
				if !f.ControlOK || f.Form != guard.FormFirstChar || !strings.Contains(f.Sigils, "/") || !strings.Contains(f.Sigils, "!") {
					t.Fatalf("dispatch facts: form %q sigils %q control %v", f.Form, f.Sigils, f.ControlOK)
				}
				for _, ob := range f.Observations {
					if ob.Door == "board" && (ob.Dispatched || ob.SideEffect) {
						t.Errorf("board door dispatched %q", ob.Input)
					}
				}
			}
			v := gates.Local(home, h.ad.Name(), c.Version, past)
			for _, g := range v.Gates {
				if g.Name == "dispatch" && !h.dispatch {
					continue
				}
				if g.Status != gates.Pass {
					t.Errorf("%s gate at %s on local facts: %s: %s", g.Name, past.Format("2006-01-02"), g.Status, g.Reason)
				}
			}
		})
	}
}
