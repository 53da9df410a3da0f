package claudecode_test

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/claudecode"
)

// The command door on the real binary. Right after a compaction claude answers
// /compact with "Not enough messages to compact." and fires no PostCompact
// (docs/claude-code.md, "The command door's allow-list"): `seat compact` and `seat command -- /compact` exit 1 with those words
// (they waited out the 5-minute compaction timeout before). /context, which has
// no hook, is taken on claude's recorded answer.
func TestCommandDoorReportsWhatClaudeAnswered(t *testing.T) {
	r := newRig(t, "cc-cmd")
	r.Start()
	r.Send("c1", "one piece of work")
	r.Processed("c1")
	if res := r.Run("seat", "compact", "cc-cmd"); res.Code != 0 {
		t.Fatalf("first seat compact: %s\n%s", res, r.DriverLog())
	}
	if res := r.RunStdin("", "handoff", "note", "--seat", "cc-cmd", "run the linter first"); res.Code != 0 {
		t.Fatalf("handoff note: %s", res)
	}
	res := r.Run("seat", "compact", "cc-cmd")
	if res.Code != 1 || !strings.Contains(res.Stderr, "Not enough messages to compact.") {
		t.Fatalf("seat compact right after a compaction: want exit 1 with claude's words, got %s\n%s", res, r.DriverLog())
	}
	res = r.Run("seat", "command", "cc-cmd", "--", "/compact")
	if res.Code != 1 || !strings.Contains(res.Stderr, "Not enough messages to compact.") {
		t.Fatalf("seat command -- /compact right after a compaction: want exit 1 with claude's words, got %s", res)
	}
	n := 0
	for _, q := range r.api.Requests() {
		if q.Kind == "compact" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d summarisation requests reached the stand-in, want 1", n)
	}
	if res := r.Run("seat", "command", "cc-cmd", "--", "/context"); res.Code != 0 || !strings.Contains(res.Stdout, "Context usage") {
		t.Fatalf("seat command -- /context: want exit 0 with claude's answer, got %s", res)
	}
}

// A command is never pasted over a person's draft in claude's input box: it
// waits, then exits 1 unsent, and the draft is as the person typed it.
func TestCommandLeavesAPersonsDraftInClaude(t *testing.T) {
	r := newRig(t, "cc-draft")
	r.Start()
	r.CommandSparesDraft(claudecode.Composer, "/context")
	for _, q := range r.api.Requests() {
		if q.Kind == "count_tokens" {
			t.Fatalf("/context ran over the draft (a count_tokens request reached the stand-in)")
		}
	}
}
