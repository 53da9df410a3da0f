package codex_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
)

// Codex 0.171.0 has no "nothing to compact": /compact right after a compaction
// sends another summarisation request and fires PreCompact and PostCompact
// again (measured 2026-12-03). The command door reports each as done (exit
// 0, on the PostCompact hook) and both reach the stand-in.
func TestCompactRightAfterCompactOnCodexCompactsAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-twice")
	r.Start()
	r.Send("p1", "first piece of work")
	r.Processed("p1")
	for i := 1; i <= 2; i++ {
		if res := r.Run("seat", "command", r.Name, "--", "/compact"); res.Code != 0 || !strings.Contains(res.Stdout, "PostCompact") {
			t.Fatalf("seat command -- /compact #%d: want exit 0 on the PostCompact hook, got %s\n%s", i, res, r.DriverLog())
		}
	}
	r.WaitFor("two summarisation requests", 30*time.Second, func() bool {
		n, _, _ := r.compaction()
		return n == 2
	})
}

// A command is never pasted over a person's draft in Codex's input box.
func TestCommandLeavesAPersonsDraftInCodex(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-draft")
	r.Start()
	r.CommandSparesDraft(codex.Adapter{}.Composer, "/compact")
	if n, _, _ := r.compaction(); n != 0 {
		t.Fatalf("%d compactions reached the stand-in while a draft was in the box", n)
	}
}
