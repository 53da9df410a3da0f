// Command pantty keeps long-lived AI coding sessions ("seats") running in tmux
// panes safe to feed from a shared board and recoverable with nobody watching.
// This package is wiring only: flags, help text and output formatting; the
// behaviour lives in seat/, tmux/, handoff/ and recover/.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pantty/pantty/harness/all"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// init registers the harnesses this binary drives (harness/all: the
// commands built from them, hook flags, and the tests see the same registry).
func init() { all.Register() }

func main() {
	os.Exit(run(os.Args))
}

// run executes the CLI and returns the exit code (docs/cli.md lists them).
func run(args []string) int {
	err := runArgs(args)
	if err == nil {
		return 0
	}
	code := exitCode(err)
	if msg := oneRefusal(err); msg != "" {
		fmt.Fprintln(os.Stderr, "pantty: "+msg)
	}
	return code
}

// runArgs runs one command line and returns its error (nil: exit 0).
func runArgs(args []string) error {
	// `pantty help [COMMAND...]` is `pantty [COMMAND...] --help`, said here
	// so that it runs whatever follows (a help command's own flag parsing
	// would refuse `pantty help seat send --wait`); the tree's help command
	// (helpCommand) lists it and takes the forms with a global flag first.
	if len(args) > 1 && args[1] == "help" {
		args = append(append([]string{args[0]}, args[2:]...), "--help")
	}
	if call, home, ok := hookFastArgs(args); ok {
		return runHook(call, fastHookHome(home))
	}
	app := newApp()
	app.Metadata = map[string]any{argvKey: args}
	var unknown error
	app.CommandNotFound = func(c *cli.Context, name string) { unknown = unknownCommand(c, name) }
	err := app.Run(interspersed(app, args))
	if err == nil && unknown != nil {
		err = unknown
	}
	return err
}

// newApp is the whole command tree with the app-wide rules applied: one-line
// usage errors and the caller policy of every command (callers.go). The CLI
// runs it, and completion and the manual page are generated from it.
func newApp() *cli.App {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and the harness versions it was measured against"}
	cli.VersionPrinter = printVersion
	app := &cli.App{
		Name:  "pantty",
		Usage: "keep AI coding seats in tmux safe to feed from a board and recoverable unattended",
		Description: "pantty help [COMMAND...] is pantty [COMMAND...] --help; pantty version is pantty --version.\n" +
			"State lives under $PANTTY_HOME (default ${XDG_STATE_HOME:-~/.local/state}/pantty), one directory per seat.\n" +
			"Exit codes: 0 done, 1 failed, 2 bad input or usage (nothing changed), 3 refused: a live owner holds the seat,\n" +
			"4 could not observe (the answer is unknown), 5 not found (no such seat, state root or message),\n" +
			"6 conflict (the id is stored with a different text).",
		Version:              buildVersion(),
		EnableBashCompletion: true,
		// urfave/cli adds --help only when no command is named help.
		Flags: append(globalFlags(), cli.HelpFlag),
		Commands: []*cli.Command{
			seatCommand(),
			handoffCommand(),
			statusCommand(),
			watchCommand(),
			eventsCommand(),
			hostsCommand(),
			measureCommand(),
			gatesCommand(),
			recoverCommand(),
			demoCommand(),
			completionCommand(),
			manCommand(),
			versionCommand(),
			helpCommand(),
			hookCommand(),
			simCommand(),
			driveCommand(),
			execCommand(),
			hookDoorCommand(),
		},
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return unknownFlag(c, err, nil)
		},
	}
	oneLineUsageErrors(app.Commands)
	seatNamesNotHelp(app.Commands)
	completeSeatNames(app.Commands)
	applyRemoteSeats(app.Commands, "")
	applyCallerPolicies(app.Commands, "")
	return app
}

// globalFlags are accepted before or after the command (`pantty seat list
// --home DIR`): interspersed moves them to the front.
func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "home", Usage: "state root (overrides $PANTTY_HOME)", EnvVars: []string{config.HomeEnv}},
	}
}

// oneLineUsageErrors gives every command without its own handler the app's
// usage-error form: one line on stderr and exit 2, a flag typo with the
// nearest flag (suggest.go). urfave/cli's default prints "Incorrect Usage" and
// the whole help to stdout, where a script would take it for output.
func oneLineUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error { return unknownFlag(ctx, err, c.Flags) }
		}
		oneLineUsageErrors(c.Subcommands)
	}
}

// seatNamesNotHelp takes urfave/cli's help verb (`help`, alias `h`) off the
// commands that have no subcommands: there the first argument is a seat
// name, and `pantty seat rm h` printed rm's help and exited 0 with seat h
// still there. A group keeps it (`pantty seat help`); --help works on all.
func seatNamesNotHelp(cmds []*cli.Command) {
	for _, c := range cmds {
		if len(c.Subcommands) == 0 {
			c.HideHelpCommand = true
		}
		seatNamesNotHelp(c.Subcommands)
	}
}

// oneRefusal is err's message with a refusal said once: ErrOwned's own words
// ("seat is owned by a live driver") lead every such error, and the reason
// after them says it again naming the seat and its holder ("seat NAME is held
// by …"), which is the one a person needs.
func oneRefusal(err error) string {
	msg := err.Error()
	if errors.Is(err, state.ErrOwned) {
		if i := strings.Index(msg, state.ErrOwned.Error()+": "); i >= 0 && strings.Contains(msg[i:], " is held by ") {
			msg = msg[:i] + msg[i+len(state.ErrOwned.Error())+2:]
		}
	}
	return msg
}
