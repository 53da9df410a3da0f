package sim

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the simulator: the tmux tests
// re-execute it with PANTTY_SIM_CHILD=1 so the real Main runs in a real pane.
func TestMain(m *testing.M) {
	if os.Getenv("PANTTY_SIM_CHILD") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
