package driver

import (
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
)

// TestAStatusCarriesTheDriversClock: the times a status records are taken
// from the driver's clock, the one its decisions read, so a status written
// at a decision says when that decision was made (recover and status judge
// a queued or submitted message's age by them).
func TestAStatusCarriesTheDriversClock(t *testing.T) {
	t.Parallel()
	d, _ := idleDriver(t)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d.clock = func() time.Time { return now }
	if _, err := d.S.Enqueue(guard.Message{ID: "m1", From: "board", Text: "a status on the driver's clock"}, guard.DefaultMaxMessageBytes, now); err != nil {
		t.Fatal(err)
	}
	d.addMessage("m1")
	t.Cleanup(d.waitT.stop)
	d.maybeSubmit()
	if st := status(t, d, "m1"); st.State != inbox.StateSubmitting || !st.UpdatedAt.Equal(now) {
		t.Fatalf("status after the paste: %s updated at %s, want submitting at %s (the driver's clock)", st.State, st.UpdatedAt, now)
	}
}
