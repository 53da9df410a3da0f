package main

// A seat named HOST:SEAT in the verbs that steer it (start, stop, cancel,
// retry, drop, command, …): the same verb runs on that host over ssh, with
// the flags given here, this terminal's stdin, stdout and stderr, and the
// remote pantty's exit code. The remote decides everything as it does at
// home (its own caller rules, its own environment for a start, its paths for
// a workdir); this side only refuses what it cannot pass on.

import (
	"strconv"
	"strings"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/urfave/cli/v2"
)

// remoteVerbs are the seat verbs whose first argument, when it is HOST:SEAT,
// sends the whole verb to that host. Left out: attach, watch-pane and relay
// (they attach a terminal, which ssh -o BatchMode without -t does not give),
// done (a seat's own word, from inside it), and the verbs that already
// forward (send, inbox, show, status).
var remoteVerbs = map[string]bool{
	"seat init": true, "seat start": true, "seat stop": true, "seat command": true,
	"seat compact": true, "seat probe": true, "seat cancel": true, "seat retry": true,
	"seat drop": true, "seat rm": true, "seat prepare-home": true,
}

// applyRemoteSeats wraps the action of every remote verb: a first argument
// naming a host of hosts.toml (HOST:SEAT) runs the verb there instead. Run
// before applyCallerPolicies, so a command refused inside a seat is refused
// before it reaches another host too.
func applyRemoteSeats(cmds []*cli.Command, parent string) {
	for _, c := range cmds {
		name := strings.TrimSpace(parent + " " + c.Name)
		if c.Action != nil && remoteVerbs[name] {
			act, verb := c.Action, strings.Fields(name)
			c.Action = func(ctx *cli.Context) error {
				if !strings.Contains(ctx.Args().First(), ":") {
					return act(ctx)
				}
				h, seatName, remote, err := hostOf(ctx, ctx.Args().First())
				if err != nil {
					return err
				}
				if !remote {
					// local:NAME: the verb reads its own argument, so it is
					// named plainly (a hint that pastes).
					return usageErr("seat %s is this machine's: pantty %s", ctx.Args().First(), strings.Join(append(append(append([]string{}, verb...), seatName), ctx.Args().Tail()...), " "))
				}
				args, err := forwardedArgs(ctx, h, verb, seatName)
				if err != nil {
					return err
				}
				return forward(h, args...)
			}
		}
		applyRemoteSeats(c.Subcommands, name)
	}
}

// forwardedArgs is the verb's command line for the remote pantty: the verb,
// every flag set here with its value, then `--` and the plain seat name with
// the arguments after it (so an argument that starts with "-", a command's
// text, stays an argument). Global flags (--home) are not passed: the host's
// state root is hosts.toml's.
func forwardedArgs(c *cli.Context, h fleet.Host, verb []string, seatName string) ([]string, error) {
	args := append([]string{}, verb...)
	for _, fl := range c.Command.Flags {
		n := fl.Names()[0]
		if !c.IsSet(n) {
			continue
		}
		switch fl.(type) {
		case *cli.BoolFlag:
			args = append(args, "--"+n+"="+strconv.FormatBool(c.Bool(n)))
		case *cli.StringFlag:
			args = append(args, "--"+n, c.String(n))
		case *cli.DurationFlag:
			args = append(args, "--"+n, c.Duration(n).String())
		case *cli.IntFlag:
			args = append(args, "--"+n, strconv.Itoa(c.Int(n)))
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(n) {
				args = append(args, "--"+n, v)
			}
		default:
			return nil, usageErr("%s: --%s cannot be passed to another host; run the verb there: %s", strings.Join(verb, " "), n, h.Command(append(verb, "--help")...))
		}
	}
	args = append(args, "--", seatName)
	return append(args, c.Args().Tail()...), nil
}
