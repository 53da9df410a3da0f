package crashtest

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// The test binary re-executes itself as the writer to kill: childEnv names the
// writer (writers_test.go), homeEnv the state root it writes in.
const (
	childEnv = "PANTTY_CRASHTEST_WRITER"
	homeEnv  = "PANTTY_CRASHTEST_HOME"
)

func init() {
	// The writer runs on the main goroutine, locked to the main thread, so every
	// system call of the write is made by one thread the tracer can follow.
	if os.Getenv(childEnv) != "" {
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		os.Exit(writeAsChild(name, os.Getenv(homeEnv)))
	}
	os.Exit(seattest.Main(m))
}

// writeAsChild performs one write of version 2, between two getppid calls that
// mark, for the tracer, where the write begins and ends on this thread.
func writeAsChild(name, home string) int {
	w, ok := writerNamed(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "no writer %q\n", name)
		return 2
	}
	s, err := state.Open(home, "crash")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	syscall.Getppid()
	err = w.write(s, 2)
	syscall.Getppid()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
