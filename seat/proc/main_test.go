package proc_test

import (
	"io"
	"os"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if any test leaves a tmux server, driver or
// simulated harness behind, and runs four tests at once: they wait on tmux and
// the simulator, not the CPU. Run as `X __exec LAUNCH` (exactly a pane
// process's command line) the test binary is a stand-in pane process for
// inside_test.go: it runs this package's binary, as a real pane runs
// pantty's, and lives until its stdin closes.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "__exec" {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	tmuxtest.WaitBoundParallel(4)
	os.Exit(seattest.Main(m))
}
