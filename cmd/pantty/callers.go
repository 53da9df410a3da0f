package main

import (
	"sort"

	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// callerPolicy says whether a command may run inside a seat's process tree.
// A seat's model has a shell tool, and board text can ask it to use it: every
// command that changes what a seat does is refused there (docs/intake.md), whatever
// the environment says, because Inside finds the seat by process ancestry.
type callerPolicy string

const (
	// anyCaller: reads, and the doors the harness itself runs (hook, sim).
	anyCaller callerPolicy = "any caller"
	// ownSeat: allowed inside a seat for that seat only (the command checks
	// its target with proc.RefuseOtherSeat); outside, for any seat.
	ownSeat callerPolicy = "own seat only"
	// outside: steers; refused inside any seat, exit 2, before it looks at
	// its arguments.
	outside callerPolicy = "outside only"
	// outsideUnlessReadOnly: steers, except with the flag that makes it only
	// read (recover --dry-run, recover install --print); the command checks.
	outsideUnlessReadOnly callerPolicy = "outside only (its read-only flag: any caller)"
)

// callers is the one table of who may run what (docs/cli.md, "Run from inside
// a seat"). Every command with an action is listed; TestEveryCommandHasACallerPolicy
// keeps it complete, so a new command is classified when it is added.
var callers = map[string]callerPolicy{
	"seat init":         outside, // writes a seat's configuration, including the command a start runs
	"seat start":        outside, // with or without --takeover
	"seat stop":         outside,
	"seat list":         anyCaller,
	"seat attach":       outside, // switches the seat to relay
	"seat watch-pane":   anyCaller,
	"seat relay":        outside,
	"seat send":         ownSeat, // a note to itself; to another seat is steering
	"seat command":      outside,
	"seat compact":      outside,
	"seat probe":        outside,
	"seat cancel":       outside,
	"seat retry":        outside,
	"seat drop":         outside, // withdraws queued messages
	"seat rm":           outside, // removes a seat and its records
	"seat inbox":        anyCaller,
	"seat show":         anyCaller,
	"seat prepare-home": outside, // writes the harness's first-run answers (trust, key approval) into its home
	"seat done":         ownSeat, // the seat's own "finished" (recover verifies the workdir)
	"handoff note":      ownSeat,
	"handoff request":   ownSeat,
	"handoff show":      anyCaller,
	"status":            anyCaller,
	"watch":             anyCaller,
	"measure dispatch":  outside, // creates and drives a seat of its own
	"measure contract":  outside, // creates and drives a seat of its own
	"gates":             anyCaller,
	"recover":           outsideUnlessReadOnly,
	"recover install":   outsideUnlessReadOnly,
	"recover uninstall": outside,
	"recover check":     anyCaller,
	"demo":              outside, // starts harnesses
	"hook":              ownSeat, // the harness's report on its own seat; fails open (exit 0, nothing recorded)
	"sim":               anyCaller,
	"events":            anyCaller, // reads records
	"completion":        anyCaller,
	"man":               anyCaller,
	"version":           anyCaller,
	"help":              anyCaller,
	"hosts":             anyCaller, // reads hosts.toml and asks each host over ssh; changes nothing
	"__drive":           outside,   // drives a seat: only start and recover spawn it
	"__exec":            outside,   // launches a seat's harness from its launch record
	"__hookdoor":        anyCaller, // a jailed seat's hook door: started by its pane process (inside the seat's tree), serves only the socket handed to it on fd 3
}

// applyCallerPolicies wraps the action of every outside-only command with the
// refusal, so the rule is applied in one place rather than remembered per verb.
func applyCallerPolicies(cmds []*cli.Command, parent string) {
	for _, c := range cmds {
		name := c.Name
		if parent != "" {
			name = parent + " " + c.Name
		}
		if c.Action != nil && callers[name] == outside {
			act, what := c.Action, name
			c.Action = func(ctx *cli.Context) error {
				if err := proc.RefuseInside(what); err != nil {
					return err
				}
				return act(ctx)
			}
		}
		applyCallerPolicies(c.Subcommands, name)
	}
}

// commandNames lists every command with an action, by full name.
func commandNames(cmds []*cli.Command, parent string) []string {
	var out []string
	for _, c := range cmds {
		name := c.Name
		if parent != "" {
			name = parent + " " + c.Name
		}
		if c.Action != nil {
			out = append(out, name)
		}
		out = append(out, commandNames(c.Subcommands, name)...)
	}
	sort.Strings(out)
	return out
}

// ownSeatTarget resolves the seat an own-seat command is about: the named seat
// (refused when the caller is inside another one), or, with no name, the seat
// the caller runs inside, found by ancestry (PANTTY_SEAT only when there is none).
func ownSeatTarget(c *cli.Context, name, what string) (state.Seat, error) {
	home, err := homeOf(c)
	if err != nil {
		return state.Seat{}, err
	}
	w, inside := proc.Inside()
	if name == "" {
		if !inside {
			return state.Seat{}, usageErr("no seat: run this inside a seat, or pass --seat NAME")
		}
		name = w.Name
		// By ancestry the pane's launch record names the home; the marker's
		// home counts only when neither --home nor PANTTY_HOME names one.
		if w.By == "ancestry" || (w.Home != "" && c.String("home") == "") {
			home = w.Home
		}
	}
	s, err := state.Existing(home, name)
	if err != nil {
		return s, err
	}
	if err := proc.RefuseOtherSeat(s, what); err != nil {
		return s, err
	}
	return s, nil
}
