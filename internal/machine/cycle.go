package machine

import "fmt"

// Cycle is a compaction cycle's evidence as recorded so far: the hook events
// of the compaction pantty chose, and the hashes of the handoff it
// materialized and of the one the harness re-injected.
type Cycle struct {
	PreCompact, Injected, PostCompact bool
	Hash, InjectedHash                string
	// InjectsLater: the harness re-injects the handoff with the first turn
	// after the compaction, not at once (Codex CLI, Gemini CLI): the cycle
	// is done at PostCompact and the injection is recorded when that turn
	// starts.
	InjectsLater bool
}

// CycleVerdict is where a compaction cycle stands.
type CycleVerdict int

// The verdicts on a compaction cycle.
const (
	CycleRunning CycleVerdict = iota // evidence is still awaited
	CycleDone                        // the compaction ran and the handoff came back (or will, with the next turn)
	CycleFailed                      // the handoff that came back is not the one materialized
)

// JudgeCycle decides a cycle from its evidence: done once the compaction has
// ended and the re-injected handoff is the materialized one (by hash), or
// at PostCompact for a harness that re-injects later; failed when the hashes
// differ (why says which); else still running.
func JudgeCycle(c Cycle) (v CycleVerdict, why string) {
	switch {
	case c.PostCompact && !c.Injected && c.InjectsLater:
		return CycleDone, ""
	case !c.Injected || !c.PostCompact:
		return CycleRunning, ""
	case c.InjectedHash != c.Hash:
		return CycleFailed, fmt.Sprintf("the re-injected handoff (hash %q) is not the one materialized (%s)", c.InjectedHash, c.Hash)
	}
	return CycleDone, ""
}

// Missing names the evidence a cycle still lacks, in the order it comes: what
// a cycle that timed out failed for want of.
func (c Cycle) Missing() []string {
	var m []string
	if !c.PreCompact {
		m = append(m, "PreCompact")
	}
	if !c.Injected {
		m = append(m, "SessionStart(compact)")
	}
	if !c.PostCompact {
		m = append(m, "PostCompact")
	}
	return m
}
