package claudecode_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPasteToEvidenceOnRealClaude is a measurement (PANTTY_MEASURE_PASTE
// set): 10 messages through the driver to the real claude, each at the
// model exactly once; it logs the paste's record → UserPromptSubmit
// evidence per message and the Enter retries the driver needed
// (docs/performance.md, "Enter on the paste's commit").
func TestPasteToEvidenceOnRealClaude(t *testing.T) {
	if os.Getenv("PANTTY_MEASURE_PASTE") == "" {
		t.Skip("a measurement: set PANTTY_MEASURE_PASTE=1")
	}
	r := newRig(t, "cc-commit")
	r.Start()
	var took []time.Duration
	for i := range 10 {
		id := fmt.Sprintf("pc%d", i)
		r.Send(id, "a message entered on its paste's commit")
		r.Processed(id)
		st := r.Status(id)
		a, err := r.Seat().ArtifactFile(id, 1).Read()
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, st.SubmittedAt.Sub(a.SentAt))
	}
	for id, n := range r.Turns() {
		if n != 1 {
			t.Errorf("%s reached the model %d times", id, n)
		}
	}
	slices.Sort(took)
	t.Logf("RESULT record → evidence n=%d: median %s, worst %s, all %v; Enter retries: %d", len(took),
		took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), took,
		strings.Count(r.DriverLog(), "Enter retry"))
}
