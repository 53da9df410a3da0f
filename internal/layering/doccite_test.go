package layering_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/doccite"
)

// TestDocumentsCiteWhatShips: the README, every docs/*.md and the examples cite only what a
// user of the repository has — no design brief, no path outside it, no
// repository path, Go declaration or docs section that does not exist (a
// reader followed "DESIGN §10" to nothing, eleven times).
func TestDocumentsCiteWhatShips(t *testing.T) {
	root := moduleRoot(t)
	// The seat's handoff/ directory (handoff/current, cycle.toml …) shares its
	// name with the handoff package.
	c, err := doccite.New(root, "handoff", "harness")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "*"))
	for _, e := range examples {
		if !strings.HasSuffix(e, ".go") { // the examples' own test is code
			docs = append(docs, e)
		}
	}
	docs = append(docs, filepath.Join(root, "README.md"))
	if len(docs) < 10 {
		t.Fatalf("found only %d documents", len(docs))
	}
	cited := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, doc)
		bad, n := c.Check(rel, string(data))
		for _, b := range bad {
			t.Error(b)
		}
		cited += n
	}
	if cited < 300 {
		t.Fatalf("found only %d citations in the documents: the patterns no longer match them", cited)
	}
}

// TestCodeCommentsCiteNoBrief: a comment is read by whoever reads the code,
// who has the repository, not the team's design brief: no Go file cites it
// (the two that did now name docs/intake.md and the measurement). The
// citation checker's own patterns and tests are the one place the words
// stand.
func TestCodeCommentsCiteNoBrief(t *testing.T) {
	root := moduleRoot(t)
	checker := []string{"internal/doccite/", "internal/layering/doccite_test.go", "seat/gates/cite_test.go"}
	files := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, c := range checker {
			if strings.HasPrefix(rel, c) {
				return nil
			}
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "DESIGN §") || strings.Contains(strings.ToLower(line), "design brief") || strings.Contains(line, "../shared/") {
				t.Errorf("%s:%d cites what does not ship: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("read only %d Go files", files)
	}
}
