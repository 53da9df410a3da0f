package recover_test

import (
	"os"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

// TestMain fails the package if any test leaves a tmux server, driver or
// simulated harness behind.
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }
