package main

import (
	"path/filepath"
	"testing"
)

// TestABenchSeatIsAValidSeat makes the seat the delivery and turn-end
// sections start, in this package's process as the bench does, and loads
// its seat.toml back: a bench whose harness is not registered fails here
// instead of in the middle of a measurement (scripts/bench.sh's delivery
// section failed "harness = \"sim\": want one of" for a day, unnoticed).
func TestABenchSeatIsAValidSeat(t *testing.T) {
	b := &bench{work: t.TempDir()}
	rs, err := b.newRealSeat(filepath.Join(t.TempDir(), "home"), "", "b1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rs.s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Harness != "sim" {
		t.Fatalf("the bench seat's harness is %q, want sim", c.Harness)
	}
}
