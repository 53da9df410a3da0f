package main

import (
	"strings"

	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// seatCommand is the `pantty seat` command table: one subcommand per verb,
// each verb's action in its own cmd_seat_<verb>.go file. The harness names
// come from the registered adapters.
func seatCommand() *cli.Command {
	return &cli.Command{
		Name:  "seat",
		Usage: "create, start, stop, feed and steer seats",
		Subcommands: []*cli.Command{
			{
				Name:      "init",
				Usage:     "write a commented seat.toml for a new seat",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "harness", Usage: strings.Join(state.HarnessNames(), " | "), Required: true},
					&cli.StringFlag{Name: "workdir", Usage: "directory the harness works in", Required: true},
					&cli.StringSliceFlag{Name: "env", Usage: "KEY=VALUE added to the harness environment (repeatable)"},
				},
				Action: seatInit,
			},
			{
				Name:      "start",
				Usage:     "start the seat's harness in tmux and its driver (a running seat: nothing changes, exit 0, its holder named; --takeover replaces it)",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "takeover", Usage: "replace the live driver whose holder id is `HOLDER`"},
					&cli.BoolFlag{Name: "refresh-env", Usage: "record this shell's environment (PATH, pass_env values such as a rotated API key) in launch-env.toml, replacing the recorded one; every later launch, recover's included, uses the record"},
				},
				Action: seatStart,
			},
			{
				Name: "prepare-home",
				Usage: "answer the harness's first-run dialogs ahead (onboarding, API key, folder trust, hook review) in the home the seat's " +
					"harness will see, and print what was written (a changed file of yours is kept beside it first); refused while a driver holds the seat",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "dry-run", Usage: "print what would change in a home that is not the seat's own, and write nothing"}},
				Action:    seatPrepareHome,
			},
			{Name: "stop", Usage: "stop driver and harness; all state stays", ArgsUsage: "NAME", Action: seatStop},
			{Name: "list", Usage: "list seats with intent, owner and phase", Flags: append([]cli.Flag{jsonFlag()}, fleetFlags()...), Action: seatList},
			{Name: "attach", Usage: "switch the seat to relay (the driver submits nothing) and attach this terminal; back to direct when you detach", ArgsUsage: "NAME", Action: seatAttach},
			{Name: "watch-pane", Usage: "attach read-only (the driver keeps submitting)", ArgsUsage: "NAME", Action: seatWatchPane},
			{
				Name:      "relay",
				Usage:     "force a seat out of relay mode when observing the attached clients fails",
				ArgsUsage: "NAME --off",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "off", Usage: "leave relay now; clients still attached are ignored"}},
				Action:    seatRelay,
			},
			sendCommand(),
			{
				Name: "command",
				Usage: "the command door: send an allow-listed harness command (e.g. -- /compact keep the procedure) " +
					"once the seat is idle with an empty input box, and wait for the harness to take it " +
					"(exit 0 taken, 1 refused or not taken within 10s, with the harness's words; 4 unknown)",
				ArgsUsage: "NAME -- /COMMAND [ARGS...]",
				Flags:     []cli.Flag{waitFlag()},
				Action:    seatCmd,
			},
			{
				Name: "compact",
				Usage: "run the compaction cycle now: materialize the handoff (refused if unchanged), /compact, re-inject " +
					"(exit 1 within seconds when the harness refuses, e.g. \"Not enough messages to compact.\")",
				ArgsUsage: "NAME [-- INSTRUCTIONS...]",
				Flags:     []cli.Flag{waitFlag()},
				Action:    seatCompact,
			},
			{Name: "probe", Usage: "prove the seat can run a turn: a probe through the board path must be processed", ArgsUsage: "NAME", Action: seatProbe},
			{Name: "cancel", Usage: "cancel the in-flight turn (one Escape, verified)", ArgsUsage: "NAME", Action: seatCancel},
			{Name: "retry", Usage: "re-queue a failed message", ArgsUsage: "NAME ID", Action: seatRetry},
			seatDropCommand(),
			seatRmCommand(),
			{Name: "inbox", Usage: "list the seat's messages and their states", ArgsUsage: "NAME | HOST:NAME", Flags: append([]cli.Flag{jsonFlag()}, hostFlag()), Action: seatInbox},
			seatShowCommand(),
			seatDoneCommand(),
		},
	}
}
