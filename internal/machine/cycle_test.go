package machine

import (
	"slices"
	"strings"
	"testing"
)

// TestJudgeCycle pins when a compaction cycle is done: the compaction ended
// and the handoff that came back is the one materialized, by hash — or, for
// a harness that re-injects with the next turn, at PostCompact.
func TestJudgeCycle(t *testing.T) {
	full := Cycle{PreCompact: true, Injected: true, PostCompact: true, Hash: "h1", InjectedHash: "h1"}
	with := func(f func(*Cycle)) Cycle { c := full; f(&c); return c }
	cases := []struct {
		name string
		c    Cycle
		want CycleVerdict
	}{
		{"all evidence, the same handoff", full, CycleDone},
		{"nothing yet", Cycle{Hash: "h1"}, CycleRunning},
		{"re-injected, compaction not ended", with(func(c *Cycle) { c.PostCompact = false }), CycleRunning},
		{"ended, not re-injected", with(func(c *Cycle) { c.Injected, c.InjectedHash = false, "" }), CycleRunning},
		{"ended, re-injected with the next turn", with(func(c *Cycle) { c.Injected, c.InjectedHash, c.InjectsLater = false, "", true }), CycleDone},
		{"another handoff came back", with(func(c *Cycle) { c.InjectedHash = "h2" }), CycleFailed},
		{"another handoff, on a harness that injects later", with(func(c *Cycle) { c.InjectedHash, c.InjectsLater = "h2", true }), CycleFailed},
		// PreCompact is recorded, not required: the handoff was materialized
		// by the cycle itself before its /compact.
		{"no PreCompact", with(func(c *Cycle) { c.PreCompact = false }), CycleDone},
	}
	for _, c := range cases {
		got, why := JudgeCycle(c.c)
		if got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
		if (got == CycleFailed) != (why != "") {
			t.Errorf("%s: why %q with verdict %d", c.name, why, got)
		}
		if got == CycleFailed && (!strings.Contains(why, c.c.InjectedHash) || !strings.Contains(why, c.c.Hash)) {
			t.Errorf("%s: why %q does not name both hashes", c.name, why)
		}
	}
}

// TestCycleMissing names what a timed-out cycle lacked, in arrival order.
func TestCycleMissing(t *testing.T) {
	if got := (Cycle{}).Missing(); !slices.Equal(got, []string{"PreCompact", "SessionStart(compact)", "PostCompact"}) {
		t.Errorf("nothing arrived: %v", got)
	}
	if got := (Cycle{PreCompact: true, PostCompact: true}).Missing(); !slices.Equal(got, []string{"SessionStart(compact)"}) {
		t.Errorf("no re-injection: %v", got)
	}
	if got := (Cycle{PreCompact: true, Injected: true, PostCompact: true}).Missing(); len(got) != 0 {
		t.Errorf("all arrived: %v", got)
	}
}
