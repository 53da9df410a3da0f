package inbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
)

// TestEnqueueSameIDIsADuplicateOrAConflict: an id names one message. The
// same text again is a duplicate (done, nothing written); another text is
// ErrConflict, and the stored message stays as it was.
func TestEnqueueSameIDIsADuplicateOrAConflict(t *testing.T) {
	dir := t.TempDir()
	b := Box{Root: filepath.Join(dir, "inbox"), Tmp: filepath.Join(dir, "tmp")}
	if err := os.MkdirAll(b.Tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if res, err := b.Enqueue(guard.Message{ID: "m1", Text: "first"}, 0, now); err != nil || res.Duplicate {
		t.Fatalf("first send: %+v %v", res, err)
	}
	if res, err := b.Enqueue(guard.Message{ID: "m1", Text: "first"}, 0, now); err != nil || !res.Duplicate {
		t.Fatalf("the same text again: want a duplicate, got %+v %v", res, err)
	}
	res, err := b.Enqueue(guard.Message{ID: "m1", Text: "second"}, 0, now)
	if !errors.Is(err, ErrConflict) || !res.Duplicate {
		t.Fatalf("another text under m1: want ErrConflict, got %+v %v", res, err)
	}
	if m, err := b.ReadStored("m1"); err != nil || m.Text != "first" {
		t.Fatalf("the stored message changed: %+v %v", m, err)
	}
}
