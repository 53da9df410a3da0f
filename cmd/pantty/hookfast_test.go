package main

import (
	"reflect"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHookFastArgsMatchesTheCLI checks that the hook fast path reads every
// form it accepts exactly as urfave/cli does, and leaves the rest to it.
func TestHookFastArgsMatchesTheCLI(t *testing.T) {
	accepted := [][]string{
		{"hook"},
		{"hook", "--seat", "a"},
		{"--home", "/h", "hook", "--seat", "a"},
		{"--home=/h", "hook", "--seat=a", "--status-line"},
		{"hook", "--seat", "a", "--home", "/h"},
		{"hook", "--tmux", "pane-died", "--seat", "a"},
		{"--home", "/h", "hook", "--seat", "a", "--codex-hook"},
		{"--home", "/h", "hook", "--seat", "a", "--codex-notify", `{"type":"agent-turn-complete"}`},
		{"hook", "x", "--seat", "a", "y"},
		{"--home", "/h", "hook", "--seat", "a", "--gemini-hook"},
	}
	for _, a := range accepted {
		args := append([]string{"pantty"}, a...)
		fast, fastHome, ok := hookFastArgs(args)
		if !ok {
			t.Errorf("%q: not taken by the fast path", a)
			continue
		}
		var slow hookCall
		var slowHome string
		app := newApp()
		for _, c := range app.Commands {
			if c.Name == "hook" {
				c.Action = func(c *cli.Context) error {
					slow, slowHome = hookCallOf(c, hookDoors()), c.String("home")
					return nil
				}
			}
		}
		t.Setenv("PANTTY_HOME", "")
		if err := app.Run(interspersed(app, args)); err != nil {
			t.Fatalf("%q: %v", a, err)
		}
		if fastHome != slowHome || !sameHookCall(fast, slow) {
			t.Errorf("%q: fast path %+v home %q, CLI %+v home %q", a, fast, fastHome, slow, slowHome)
		}
	}
	rejected := [][]string{
		{}, {"--version"}, {"hook", "--help"}, {"hook", "-h"}, {"--seat", "a", "hook"},
		{"hook", "--seat"}, {"hook", "--seat", "--status-line"}, {"hook", "--seat", "a", "--seat", "b"},
		{"hook", "--status-line=true"}, {"hook", "--nope"}, {"hook", "-seat", "a"}, {"hook", "--", "x"},
		{"hook", "--codex-hook", "--codex-notify"}, {"seat", "list"}, {"hooks"},
		{"hook", "--generate-bash-completion"},
	}
	for _, a := range rejected {
		if _, _, ok := hookFastArgs(append([]string{"pantty"}, a...)); ok {
			t.Errorf("%q: taken by the fast path, want the full CLI", a)
		}
	}
}

func sameHookCall(a, b hookCall) bool {
	an, bn := "", ""
	if a.door != nil {
		an = a.door.Name
	}
	if b.door != nil {
		bn = b.door.Name
	}
	a.door, b.door = nil, nil
	if len(a.args) == 0 && len(b.args) == 0 {
		a.args, b.args = nil, nil
	}
	return an == bn && reflect.DeepEqual(a, b)
}
