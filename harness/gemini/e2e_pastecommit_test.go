package gemini_test

import (
	"os"
	"testing"
)

// TestPasteToEvidenceOnRealGemini is a measurement (PANTTY_MEASURE_PASTE
// set): 10 messages through the driver to the real Gemini CLI, each at the
// model exactly once; it logs the paste's record → UserPromptSubmit
// evidence per message and the Enter retries the driver needed
// (docs/gemini.md: its Enter 300 ms after a paste was measured a newline).
func TestPasteToEvidenceOnRealGemini(t *testing.T) {
	if os.Getenv("PANTTY_MEASURE_PASTE") == "" {
		t.Skip("a measurement: set PANTTY_MEASURE_PASTE=1")
	}
	r := newRig(t, "gm-commit")
	r.Start()
	r.MeasurePasteToEvidence("gc", "a message entered after the paste settle")
}
