package main

import (
	"path/filepath"
	"strings"

	"github.com/pantty/pantty/seat/state"
)

// hookFastArgs parses the `pantty hook` command lines the harnesses run
// (launch.HookCommand: `pantty --home H hook --seat S [--status-line |
// --tmux NAME | --DOOR [ARG...]]`) without building the command tree: a hook
// runs 3-5 times per turn and the harness waits on it, and newApp plus
// urfave/cli's parse were about a quarter of a millisecond and some hundred
// page faults of every call. ok is false for anything else (help, an unknown
// or repeated flag, a value that looks like a flag, "--"), which the full CLI
// then parses and reports exactly as before.
func hookFastArgs(args []string) (call hookCall, home string, ok bool) {
	seen := map[string]bool{}
	inHook := false
	doors := hookDoors()
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if !inHook {
				if a != "hook" {
					return hookCall{}, "", false
				}
				inHook = true
				continue
			}
			call.args = append(call.args, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || name == "" || seen[name] || (!inHook && name != "home") {
			return hookCall{}, "", false
		}
		seen[name] = true
		switch name {
		case "home", "seat", "tmux":
			if !hasVal {
				if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
					return hookCall{}, "", false
				}
				i++
				val = args[i]
			}
			switch name {
			case "home":
				home = val
			case "seat":
				call.seat = val
			default:
				call.tmux = val
			}
			continue
		}
		if hasVal {
			return hookCall{}, "", false
		}
		if name == "status-line" {
			call.statusLine = true
			continue
		}
		door := -1
		for j, d := range doors {
			if d.Name == name {
				door = j
			}
		}
		if door < 0 || call.door != nil {
			return hookCall{}, "", false
		}
		call.door = &doors[door]
	}
	return call, home, inHook
}

// fastHookHome is homeOf for the fast path: --home, else $PANTTY_HOME, else
// the default state root.
func fastHookHome(home string) func() (string, error) {
	return func() (string, error) {
		if home != "" {
			return filepath.Abs(home)
		}
		return state.DefaultHome()
	}
}
