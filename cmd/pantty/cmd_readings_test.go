package main

// Readings a newcomer meets in the first hour: durations for --since, a
// handoff that does not exist yet.

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

// TestEventsSinceTakesADuration: --since 30m is the events of the last 30
// minutes, as journalctl and kubectl read it; a negative one is bad input.
func TestEventsSinceTakesADuration(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "since")
	h.Send("old", "sent an hour ago")
	h.Send("new", "sent now")
	// Age the first message's record by an hour (the events are derived from it).
	s := h.Seat()
	m, err := s.ReadStored("old")
	if err != nil {
		t.Fatal(err)
	}
	m.EnqueuedAt = m.EnqueuedAt.Add(-time.Hour)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(s.MsgPath("old"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.Run("events", "--since", "30m", "--settle", "0")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"id":"new"`) || strings.Contains(r.Stdout, `"id":"old"`) {
		t.Fatalf("events --since 30m: want the new message only, exit 0; got %s", r)
	}
	if r := h.Run("events", "--since", "2h", "--settle", "0"); r.Code != 0 || !strings.Contains(r.Stdout, `"id":"old"`) {
		t.Fatalf("events --since 2h: want the old message too; got %s", r)
	}
	if r := h.Run("events", "--since", "-5m"); r.Code != exitBadInput || !strings.Contains(r.Stderr, "negative") {
		t.Fatalf("events --since -5m: want exit 2; got %s", r)
	}
}

// TestHandoffShowBeforeAnyHandoff: one line saying there is none yet, not the
// file system's words.
func TestHandoffShowBeforeAnyHandoff(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "nohandoff")
	r := h.Run("handoff", "show", h.Name)
	if r.Code != exitNotFound || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "has no handoff yet") ||
		strings.Contains(r.Stderr, "no such file") || strings.Contains(r.Stderr, "open ") {
		t.Fatalf("handoff show before any handoff: want exit %d and one line in the user's words; got %s", exitNotFound, r)
	}
}
