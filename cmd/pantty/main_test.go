package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestMain fails the package if any test leaves a tmux server, driver or
// simulated harness behind.
func TestMain(m *testing.M) { os.Exit(tmuxtest.LeakCheck(m)) }

// TestUsageErrorsAreOneLine: a flag no command knows is exit 2 with one line on
// stderr and nothing on stdout, for subcommands too (urfave/cli's default is the
// whole help on stdout, which a script would read as output).
func TestUsageErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "usage")
	for _, args := range [][]string{
		{"seat", "init", "-x"},
		{"seat", "send", "usage", "--no-such-flag"},
		{"seat", "start", "--no-such-flag", "usage"},
		{"recover", "--no-such-flag"},
		{"status", "--no-such-flag"},
		{"handoff", "show", "--no-such-flag", "usage"},
	} {
		r := h.Run(args...)
		if r.Code != 2 || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "flag provided but not defined") {
			t.Errorf("pantty %s: want exit 2, no stdout, one stderr line naming the flag; got %s", strings.Join(args, " "), r)
		}
	}
}
