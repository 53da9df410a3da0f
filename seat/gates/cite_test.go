package gates

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/doccite"
)

// TestRegistryCitesWhatShips: `pantty gates` prints a row's sources to a user
// who has only the repository, so every citation in the shipped registry (its
// sources, artifacts and comments) resolves in it — no design brief, no path,
// Go declaration or docs section that does not exist (nine rows cited "design
// brief §3", and the dispatch row a file that had moved) — and every entry and
// every met row cites at least one thing a user can open.
func TestRegistryCitesWhatShips(t *testing.T) {
	t.Parallel()
	c, err := doccite.New("../..", "handoff", "harness")
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := c.Check("seat/gates/registry.toml", string(shipped))
	for _, b := range bad {
		t.Error(b)
	}
	r, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	cites := func(where string, texts ...string) {
		if _, n := c.Check(where, strings.Join(texts, "\n")); n == 0 {
			t.Errorf("%s cites nothing in the repository (a docs/*.md section, a measured artifact, the code): %q", where, texts)
		}
	}
	for _, e := range r.Harness {
		cites(e.Name, e.Sources...)
		for name, row := range map[string]Row{"submit": e.Submit, "cancel": e.Cancel, "context": e.Context,
			"compaction": e.Compaction, "liveness": e.Liveness, "resume": e.Resume, "dispatch": e.Dispatch.Row} {
			if row.Status == Met {
				cites(e.Name+" "+name, append(row.Sources, e.Dispatch.Artifacts)...)
			}
		}
	}
}
