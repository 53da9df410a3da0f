package seattest

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// MeasurePasteToEvidence is the real-harness paste measurement
// (PANTTY_MEASURE_PASTE set; the caller skips without it): 10 messages
// named prefix0…prefix9 through the started seat's driver, each at the
// model exactly once, logging the paste's record (the artifact's sent_at) →
// UserPromptSubmit evidence (submitted_at) per message and the Enter
// retries the driver needed. With PANTTY_MEASURE_PASTE=log it also logs the
// driver's lines for the second and third message.
func (r *E2ERig) MeasurePasteToEvidence(prefix, text string) {
	t := r.T
	t.Helper()
	var took []time.Duration
	for i := range 10 {
		id := fmt.Sprintf("%s%d", prefix, i)
		r.Send(id, text)
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
	if os.Getenv("PANTTY_MEASURE_PASTE") == "log" {
		for _, l := range strings.Split(r.DriverLog(), "\n") {
			if strings.Contains(l, prefix+"1") || strings.Contains(l, prefix+"2") {
				t.Log(l)
			}
		}
	}
	slices.Sort(took)
	t.Logf("RESULT record → evidence n=%d: median %s, worst %s, all %v; Enter retries: %d", len(took),
		took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), took,
		strings.Count(r.DriverLog(), "Enter retry"))
}
