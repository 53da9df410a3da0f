package main

import (
	"fmt"
	"os"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/seat/driver"
	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/paneexec"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// hookCommand is what the harness's hooks (and tmux's pane-died hook) run.
func hookCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "seat"},
		&cli.BoolFlag{Name: "status-line"},
		&cli.StringFlag{Name: "tmux", Usage: "a tmux hook name instead of a harness event"},
	}
	doors := hookDoors()
	for _, h := range doors {
		flags = append(flags, &cli.BoolFlag{Name: h.Name, Usage: h.Usage})
	}
	return &cli.Command{
		Name:   "hook",
		Usage:  "record one harness hook event (run by the harness, not by people)",
		Hidden: true,
		// A harness treats some exit codes as verdicts (Claude Code blocks a
		// prompt on exit 2), so trouble in pantty's own wiring — a flag it does
		// not know, no seat, an unusable home — fails open like RunHook does:
		// one line on stderr, exit 0.
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return hookFailOpen(err) },
		Flags:        flags,
		Action: func(c *cli.Context) error {
			return runHook(hookCallOf(c, doors), func() (string, error) { return homeOf(c) })
		},
	}
}

// hookCallOf is the hook call urfave/cli parsed; the first door flag given
// wins.
func hookCallOf(c *cli.Context, doors []harness.HookFlag) hookCall {
	call := hookCall{seat: c.String("seat"), statusLine: c.Bool("status-line"), tmux: c.String("tmux"), args: c.Args().Slice()}
	for _, h := range doors {
		if c.Bool(h.Name) {
			call.door = &h
			break
		}
	}
	return call
}

// hookDoors are the harnesses' own forms of a hook call
// (Capabilities.HookFlags), in registry order.
func hookDoors() []harness.HookFlag {
	var doors []harness.HookFlag
	for _, a := range harness.Adapters() {
		doors = append(doors, a.Caps().HookFlags...)
	}
	return doors
}

// hookCall is one `pantty hook` command line, parsed: by urfave/cli in
// hookCommand, or by hookFastArgs for the forms the harnesses run.
type hookCall struct {
	seat       string
	statusLine bool
	tmux       string
	door       *harness.HookFlag // a harness's own form (--codex-hook, …); nil: Claude Code's JSON
	args       []string
}

// runHook records one hook call; home resolves the state root (homeOf).
func runHook(call hookCall, home func() (string, error)) error {
	if call.seat == "" {
		return hookFailOpen(fmt.Errorf("no --seat given"))
	}
	// In pantty's jail the state root is hidden: the call goes
	// through the seat's hook door, which records it outside.
	if door := os.Getenv(jail.DoorEnv); door != "" {
		jc := jail.Call{Seat: call.seat, StatusLine: call.statusLine, Args: call.args}
		if call.door != nil {
			jc.Flag = call.door.Name
		}
		if code := jail.Send(door, jc, os.Stdin, os.Stdout, os.Stderr); code != 0 {
			return codedError{code, ""}
		}
		return nil
	}
	root, err := home()
	if err != nil {
		return hookFailOpen(err)
	}
	// A hook is the harness reporting on its own seat: from inside
	// seat A, events for seat B would be forged turn evidence.
	if err := proc.RefuseOtherSeat(state.Seat{Home: root, Name: call.seat}, "hook"); err != nil {
		return hookFailOpen(err)
	}
	var code int
	if call.door != nil {
		code = call.door.Run(root, call.seat, call.args, os.Stdin, os.Stdout, os.Stderr)
	} else {
		code = hookrun.Run(root, call.seat, call.statusLine, call.tmux, os.Stdin, os.Stdout, os.Stderr)
	}
	if code != 0 {
		return codedError{code, ""}
	}
	return nil
}

// hookFailOpen reports a hook call pantty could not even start to handle and
// lets the harness go on (exit 0): recording an event is never worth blocking
// the harness's own action.
func hookFailOpen(err error) error {
	fmt.Fprintf(os.Stderr, "pantty hook: %v (event not recorded; the harness goes on)\n", err)
	return nil
}

// simCommand runs the simulated harness (docs/sim.md).
func simCommand() *cli.Command {
	return &cli.Command{
		Name:            "sim",
		Usage:           "the simulated harness (a test and demo double)",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			if code := sim.Main(c.Args().Slice(), os.Stdin, os.Stdout, os.Stderr); code != 0 {
				return codedError{code, ""}
			}
			return nil
		},
	}
}

// driveCommand is the seat's driver process, spawned detached by `seat start`.
func driveCommand() *cli.Command {
	return &cli.Command{
		Name:      "__drive",
		Hidden:    true,
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			home, pantty, err := homeAndPantty(c)
			if err != nil {
				return err
			}
			if code := driver.Run(home, c.Args().First(), pantty); code != 0 {
				return codedError{code, ""}
			}
			return nil
		},
	}
}

// hookDoorCommand serves a jailed seat's hook door (paneexec.ServeDoor):
// started by the pane process, never by people.
func hookDoorCommand() *cli.Command {
	return &cli.Command{
		Name:      "__hookdoor",
		Hidden:    true,
		ArgsUsage: "LAUNCH.toml",
		Action: func(c *cli.Context) error {
			return paneexec.ServeDoor(c.Args().First())
		},
	}
}

// execCommand is the pane's first process: it starts the harness with the
// environment recorded in launch.toml and stays its parent, a child subreaper
// that keeps every process of the seat below the pane (paneexec.Run).
func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "__exec",
		Hidden:    true,
		ArgsUsage: "LAUNCH.toml",
		Action: func(c *cli.Context) error {
			return paneexec.Run(c.Args().First())
		},
	}
}
