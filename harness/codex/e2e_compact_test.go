package codex_test

import (
	"strings"
	"testing"
)

// TestCompactTakesNoInstructions: Codex 0.171.0's /compact takes no arguments —
// "/compact keep the zebra procedure" was sent to the model as a prompt and
// compacted nothing (measured). So the command door refuses arguments for it,
// and seat.toml's compaction.instructions are left out of the cycle (logged),
// which then runs as a bare /compact and completes.
func TestCompactTakesNoInstructions(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-instr", "[compaction]", `instructions = "keep the zebra procedure"`)
	r.Start()
	r.Send("p1", "first piece of work")
	r.Processed("p1")
	if res := r.Run("seat", "command", r.Name, "--", "/compact", "keep", "the", "zebra", "procedure"); res.Code != 2 || !strings.Contains(res.Stderr, "takes no arguments") {
		t.Fatalf("seat command -- /compact with text: want exit 2 naming the reason, got %s", res)
	}
	if res := r.Run("seat", "compact", r.Name); res.Code != 0 {
		t.Fatalf("seat compact with seat.toml instructions: %s\n%s", res, r.DriverLog())
	}
	if c, err := r.Seat().CycleFile().Read(); err != nil || c.State != "done" {
		t.Fatalf("cycle %+v %v, want done", c, err)
	}
	if !strings.Contains(r.DriverLog(), "compaction.instructions not passed") {
		t.Fatalf("the driver did not say the instructions were left out:\n%s", r.DriverLog())
	}
	r.Send("p2", "second piece of work")
	r.Processed("p2")
	for _, q := range r.api.Requests() {
		if strings.Contains(q.NewInput, "zebra") {
			t.Fatalf("the instructions reached the model as text (%s request %q)", q.Kind, q.NewInput)
		}
	}
	if n, _, _ := r.compaction(); n != 1 {
		t.Fatalf("%d compaction requests, want 1", n)
	}
}
