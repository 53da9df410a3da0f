package hookrun_test

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/state"
)

// A PreCompact whose handoff cannot be materialized (the seat has no
// session.toml) is blocked: Run answers Claude Code's way, exit 2 and nothing
// on stdout; RunBlocker hands the same message to the harness's own Blocker,
// whose stdout and exit code are the hook's. Both write the message on stderr.
func TestPreCompactBlockIsAnsweredPerHarness(t *testing.T) {
	t.Parallel()
	s, err := state.Open(t.TempDir(), "blk")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.ConfigPath(), []byte("harness = \"sim\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pre := func() io.Reader {
		return strings.NewReader(`{"hook_event_name":"PreCompact","session_id":"s1","trigger":"manual"}`)
	}
	const prefix = "pantty: compaction blocked: the handoff could not be materialized: handoff: read "
	var out, errOut bytes.Buffer
	if code := hookrun.Run(s.Home, s.Name, false, "", pre(), &out, &errOut); code != hookrun.ExitBlock || out.Len() != 0 || !strings.HasPrefix(errOut.String(), prefix) {
		t.Fatalf("Run: exit %d, stdout %q, stderr %q; want exit 2, nothing, the block's line", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	var got string
	block := func(message string, stdout io.Writer) int {
		got = message
		io.WriteString(stdout, "answer")
		return 7
	}
	if code := hookrun.RunBlocker(s.Home, s.Name, block, pre(), &out, &errOut); code != 7 || out.String() != "answer" {
		t.Fatalf("RunBlocker: exit %d, stdout %q; want the Blocker's", code, out.String())
	}
	if !strings.HasPrefix(got, prefix) || errOut.String() != got+"\n" {
		t.Fatalf("the Blocker got %q, stderr %q", got, errOut.String())
	}
}
