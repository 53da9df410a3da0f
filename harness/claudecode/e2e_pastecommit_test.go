package claudecode_test

import (
	"os"
	"testing"
)

// TestPasteToEvidenceOnRealClaude is a measurement (PANTTY_MEASURE_PASTE
// set): 10 messages through the driver to the real claude, each at the
// model exactly once; it logs the paste's record → UserPromptSubmit
// evidence per message and the Enter retries the driver needed
// (docs/performance-history.md, "Enter on the paste's commit").
func TestPasteToEvidenceOnRealClaude(t *testing.T) {
	if os.Getenv("PANTTY_MEASURE_PASTE") == "" {
		t.Skip("a measurement: set PANTTY_MEASURE_PASTE=1")
	}
	r := newRig(t, "cc-commit")
	r.Start()
	r.MeasurePasteToEvidence("pc", "a message entered on its paste's commit")
}
