package doccite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCitationsResolveOrAreReported(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "# A\n## Failure classes (what recover does)\n**The drop directory.** text\n| same-user writes | x |\n")
	write("seat/x.go", "package seat\nfunc Keep() {}\ntype Seat struct{}\nfunc (Seat) SessionFile() {}\n")
	write("handoff/handoff.go", "package handoff\n")
	write("harness/gemini/adapter.go", "package gemini\n")
	write("seat/x_test.go", "package seat\nfunc TestKeep(t *testing.T) {}\nfunc BenchmarkKeep(b *testing.B) {}\n")
	c, err := New(root, "handoff", "harness")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		text string
		bad  string // "" when every citation resolves
	}{
		{"see docs/a.md", ""},
		{"see docs/b.md", "docs/b.md, which is not in the repository"},
		{`docs/a.md, "Failure classes"`, ""},
		{`docs/a.md ("failure classes")`, ""},
		{"docs/a.md (Failure classes)", ""},
		{"docs/a.md (Failure classes, retries)", `docs/a.md "Failure classes, retries": no such section`},
		{`docs/a.md, "The drop directory"`, ""},
		{`docs/a.md, "same-user writes"`, ""},
		{"docs/a.md#failure-classes-what-recover-does", ""},
		{`docs/a.md, "Failure"`, `docs/a.md "Failure": no such section`},
		{`docs/a.md, "Limits"`, `no such section`},
		{"docs/a.md#limits", "docs/a.md#limits: no such section"},
		{"seat/x.go Keep", ""},
		{"`seat/x.go` (`Seat.SessionFile`)", ""},
		{"seat/x.go Gone", "seat/x.go Gone: that file declares no Gone"},
		{"seat/y.go", "seat/y.go, which is not in the repository"},
		{"seat/<name>/inbox", ""},
		{"seat/nosuch/<name>", "seat/nosuch/<name>, which is not in the repository"},
		{"$PANTTY_HOME/seat/x, ~/seat/y, github.com/p/seat/z", ""},
		{"handoff/current and handoff/cycle.toml", ""},
		{"handoff/gone.go", "handoff/gone.go, which is not in the repository"},
		{"handoff/notes/<ns>.md and harness/gemini-compress.json", ""},
		{"harness/gemini/adapter.go", ""},
		{"harness/gemini/testdata/gone/", "harness/gemini/testdata/gone/, which is not in the repository"},
		{"as DESIGN §10 says", `"DESIGN"`},
		{"the Design Brief", `"Design Brief"`},
		{"../shared/DESIGN.md", `"../shared"`},
		{"(`TestKeep`, BenchmarkKeep)", ""},
		{`is "Failure classes" below`, ""},
		{`(above, "The drop directory")`, ""},
		{`see "Limits"`, `docs/a.md "Limits": no such section`},
		{"`TestKeep/Outage/Credential`", ""},
		{"(`TestGone`)", "names TestGone, which no _test.go file"},
	}
	for _, tc := range cases {
		bad, n := c.Check("docs/a.md", tc.text)
		switch {
		case tc.bad == "" && len(bad) > 0:
			t.Errorf("%q: reported %q", tc.text, bad)
		case tc.bad != "" && (len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tc.bad)):
			t.Errorf("%q: reported %q, want one containing %q", tc.text, bad, tc.bad)
		case n == 0 && tc.text != "$PANTTY_HOME/seat/x, ~/seat/y, github.com/p/seat/z":
			t.Errorf("%q: counted no citation", tc.text)
		}
	}
}
