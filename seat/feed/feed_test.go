package feed

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// TestMessageEventsFollowTheEpochs derives a message's events from records in
// each state a crash, a resubmission or a retry leaves them in: evidence of an
// earlier try never shows as the current try's.

// TestMain registers the harness adapters: the seats these tests write name
// one in seat.toml.
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

func TestMessageEventsFollowTheEpochs(t *testing.T) {
	s, err := state.Open(t.TempDir(), "feed")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	m := inbox.Stored{ID: "m1", Text: "x", EnqueuedAt: at(0)}
	first := inbox.Status{ID: "m1", State: inbox.StateSubmitted, Evidence: "e1.json", SubmittedAt: at(1), Attempts: 1}
	lost := first
	lost.State, lost.Resubmits = inbox.StateQueued, 1 // requeued after a lost turn
	repasted := lost
	repasted.State, repasted.Attempts = inbox.StateSubmitting, 2
	done := repasted
	done.State, done.Evidence, done.SubmittedAt, done.EndedAt = inbox.StateProcessed, "e2.json", at(4), at(5)
	retried := inbox.Status{ID: "m1", State: inbox.StateQueued, Retries: 1, SubmittedAt: at(1), EndedAt: at(2)}

	cases := []struct {
		name     string
		st       inbox.Status
		artifact bool // the resubmission's paste is recorded (at 3s)
		want     string
	}{
		{"queued", inbox.Status{ID: "m1", State: inbox.StateQueued}, false, "queued/0.0@0"},
		{"submitted", first, false, "queued/0.0@0 submitted/0.0@1"},
		{"requeued for its resubmission", lost, false, "queued/0.0@0"},
		{"resubmission pasted, old evidence kept", repasted, true, "queued/0.0@0 resubmitted/0.1@3"},
		{"resubmission processed", done, true, "queued/0.0@0 resubmitted/0.1@3 submitted/0.1@4 processed/0.1@5"},
		{"retried: the earlier try's times stay in the status", retried, false, "queued/0.0@0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			art := filepath.Join(s.ArtifactsDir(), "m1.2.toml")
			if c.artifact {
				if err := s.ArtifactFile("m1", 2).Write(state.Artifact{ID: "m1", Attempt: 2, Resubmit: 1, SentAt: at(3)}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { removeFile(t, art) })
			}
			var got []string
			for _, e := range MessageEvents(s, m, c.st) {
				got = append(got, e.State+"/"+e.Epoch+"@"+strconv.Itoa(int(e.At.Sub(t0)/time.Second)))
			}
			if strings.Join(got, " ") != c.want {
				t.Fatalf("got %q, want %q", strings.Join(got, " "), c.want)
			}
		})
	}
}

func TestParseSinceAndOrder(t *testing.T) {
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	e := Event{At: now, key: "s/m1/queued/0.0"}
	for _, c := range []struct {
		since string
		after bool // e comes after the cursor
	}{
		{"now", false},
		{now.Format(time.RFC3339Nano), true}, // at or after T
		{now.Add(time.Nanosecond).Format(time.RFC3339Nano), false},
		{cursorOf(e).String(), false}, // the event's own cursor: taken
		{Cursor{e.At.UnixNano(), "s/m0/queued/0.0"}.String(), true},
	} {
		cur, err := ParseSince(c.since, now)
		if err != nil {
			t.Fatal(err)
		}
		if cur.After(e) != c.after {
			t.Errorf("--since %s: After = %v, want %v", c.since, cur.After(e), c.after)
		}
	}
	for _, bad := range []string{"", "yesterday", "12", "x/y", "/key"} {
		if _, err := ParseSince(bad, now); err == nil {
			t.Errorf("--since %q accepted", bad)
		}
	}
}

func removeFile(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}
