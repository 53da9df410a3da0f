package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/config"
)

func TestSessionArgsAndOwnArgs(t *testing.T) {
	t.Parallel()
	l := Launch{SessionID: "0b6f6ad2-56c8-4b5e-9a43-2f1f7f4f0c11", Config: config.Config{Model: "m1", PermissionMode: "plan"}}
	if got, want := l.SessionArgs("--permission-mode"), []string{"--session-id", l.SessionID, "--model", "m1", "--permission-mode", "plan"}; !slices.Equal(got, want) {
		t.Errorf("fresh: %q, want %q", got, want)
	}
	l.Resume, l.Config = true, config.Config{Command: "/opt/bin/x"}
	if got, want := l.SessionArgs("--approval-mode"), []string{"--resume", l.SessionID}; !slices.Equal(got, want) {
		t.Errorf("resume: %q, want %q", got, want)
	}
	if got := l.Binary("x"); got != "/opt/bin/x" {
		t.Errorf("binary %q, want seat.toml's command", got)
	}
	if got := (Launch{}).Binary("x"); got != "x" {
		t.Errorf("binary %q, want the default", got)
	}
	own := []string{"--resume", "--yolo"}
	if err := RefuseOwnArgs("h", []string{"--verbose", "--resumex"}, own, "the session"); err != nil {
		t.Errorf("a different flag refused: %v", err)
	}
	for _, args := range [][]string{{"--yolo"}, {"--verbose", "--resume=abc"}} {
		err := RefuseOwnArgs("h", args, own, "the session")
		if err == nil || !strings.Contains(err.Error(), "h: seat.toml args may not contain --") || !strings.Contains(err.Error(), "pantty sets the session itself") {
			t.Errorf("%q: %v, want refused naming the flag", args, err)
		}
	}
}
