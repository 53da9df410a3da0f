package main

// `pantty hosts` and what every fleet-aware verb shares: the --host and
// --all-hosts flags, the hosts they name, and the pass-through of one verb to
// one host for a seat named HOST:SEAT (internal/fleet; docs/fleet.md).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/urfave/cli/v2"
)

// defaultHostTimeout bounds each host of a listing: connection, the remote
// pantty's run and its answer.
const defaultHostTimeout = 10 * time.Second

func hostsCommand() *cli.Command {
	return &cli.Command{
		Name:  "hosts",
		Usage: "list the fleet's hosts ($PANTTY_HOME/hosts.toml) with their reachability and remote pantty version",
		Description: "Runs `pantty version --json` on every host over `ssh -o BatchMode=yes`, in parallel, each within\n" +
			"--timeout. A host that cannot be reached, does not answer in time or runs a pantty too old for the\n" +
			"fleet is listed as unknown with the reason. Exit 0 every host answered; 4 a host's answer is unknown;\n" +
			"2 a bad hosts.toml; 5 no state root. docs/fleet.md sets a fleet up.",
		Flags:  []cli.Flag{jsonFlag(), hostTimeoutFlag()},
		Action: hostsAction,
	}
}

// hostTimeoutFlag is the bound of each host in a fan-out.
func hostTimeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "host-timeout", Value: defaultHostTimeout, Usage: "the most one host may take to answer (then it is listed unknown)"}
}

// fleetFlags are --host, --all-hosts and their bound, on every verb that
// reads seats across hosts.
func fleetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "host", Usage: "read the seats of this host of hosts.toml (local: this machine's)"},
		&cli.BoolFlag{Name: "all-hosts", Usage: "read this machine's seats and every host's of hosts.toml"},
		&cli.DurationFlag{Name: "host-timeout", Value: defaultHostTimeout, Usage: "the most one host may take to answer (then it is listed unknown)"},
	}
}

// hostFlag is --host on a verb that names one seat: `--host H NAME` is `H:NAME`.
func hostFlag() cli.Flag {
	return &cli.StringFlag{Name: "host", Usage: "the seat is on this host of hosts.toml (the same as naming it HOST:NAME)"}
}

// hostedRow is one host of `pantty hosts --json`.
type hostedRow struct {
	Host     string  `json:"host"`
	SSH      string  `json:"ssh,omitempty"`
	State    string  `json:"state"` // ok or unknown
	Reason   string  `json:"reason,omitempty"`
	Version  *string `json:"version"`
	Fleet    *int    `json:"fleet"`
	Seconds  float64 `json:"seconds"`
	Pantty   string  `json:"pantty,omitempty"`
	HomePath string  `json:"home,omitempty"`
}

func hostsAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("hosts takes no arguments")
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	hosts, err := fleet.Load(home)
	if err != nil {
		return err
	}
	if len(hosts) == 0 && !c.Bool("json") {
		say("no hosts in %s (docs/fleet.md sets one up)", fleet.HostsPath(home))
		return nil
	}
	replies := fleet.FanOut(context.Background(), hosts, fleet.Call{Args: []string{"version", "--json"}, Bound: c.Duration("host-timeout")})
	rows := make([]hostedRow, 0, len(hosts))
	unknown := 0
	for i, r := range replies {
		h := hosts[i]
		row := hostedRow{Host: h.Name, SSH: h.SSH, State: "ok", Seconds: r.Took.Seconds(), Pantty: h.Pantty, HomePath: h.Home}
		if r.Unknown() || r.Code != 0 {
			row.State, row.Reason = "unknown", r.Reason
			if !r.Unknown() {
				row.Reason = fmt.Sprintf("host %s: pantty exited %d: %s", h.Name, r.Code, strings.TrimSpace(r.Stderr))
			}
			unknown++
		} else {
			row.Version, row.Fleet = &r.Version.Version, &r.Version.Fleet
		}
		rows = append(rows, row)
	}
	if c.Bool("json") {
		printLine(struct {
			V     int         `json:"v"`
			Hosts []hostedRow `json:"hosts"`
		}{jsonVersion, rows})
	} else {
		tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tSSH\tSTATE\tPANTTY\tTOOK\tREASON")
		for _, r := range rows {
			v, reason := "-", r.Reason
			if r.Version != nil {
				v = *r.Version
			}
			if reason == "" {
				reason = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fs\t%s\n", r.Host, termtext.Line(r.SSH), r.State, termtext.Line(v), r.Seconds, termtext.Line(reason))
		}
		tw.Flush()
	}
	if unknown > 0 {
		return codedError{exitUnknown, fmt.Sprintf("%d of %d hosts could not be asked (their reason is in the listing)", unknown, len(hosts))}
	}
	return nil
}

// fleetHosts are the hosts --host or --all-hosts name; nil when neither is
// given (the verb reads this machine's state root as ever). --all-hosts is
// this machine's state root (as host "local") and every host of hosts.toml.
func fleetHosts(c *cli.Context) ([]fleet.Host, error) {
	one, all := c.String("host"), c.Bool("all-hosts")
	if one == "" && !all {
		return nil, nil
	}
	if one != "" && all {
		return nil, usageErr("--host and --all-hosts exclude each other")
	}
	home, err := stateRoot(c)
	if err != nil {
		return nil, err
	}
	bin, err := panttyPath()
	if err != nil {
		return nil, err
	}
	local := fleet.LocalHost(bin, home)
	if one == fleet.Local {
		return []fleet.Host{local}, nil
	}
	hosts, err := fleet.Load(home)
	if err != nil {
		return nil, err
	}
	if all {
		return append([]fleet.Host{local}, hosts...), nil
	}
	h, err := fleet.Find(hosts, one)
	if err != nil {
		return nil, noHost(home, err)
	}
	return []fleet.Host{h}, nil
}

// noHost is a host name hosts.toml does not have: not found, exit 5.
func noHost(home string, err error) error {
	return codedError{exitNotFound, fmt.Sprintf("%v (%s): pantty hosts lists them", err, fleet.HostsPath(home))}
}

// hostOf resolves the host of a seat named HOST:SEAT (or --host HOST with a
// plain NAME). ok is false for a seat of this machine's state root: the verb
// runs here as ever.
func hostOf(c *cli.Context, name string) (h fleet.Host, seatName string, ok bool, err error) {
	hostName, seatName, err := fleet.SplitTarget(name)
	if err != nil {
		return fleet.Host{}, "", false, err
	}
	if c.String("host") != "" {
		if hostName != "" && hostName != c.String("host") {
			return fleet.Host{}, "", false, usageErr("seat %s is on host %s, not --host %s", name, hostName, c.String("host"))
		}
		hostName = c.String("host")
	}
	if hostName == "" || hostName == fleet.Local {
		return fleet.Host{}, seatName, false, nil
	}
	home, err := stateRoot(c)
	if err != nil {
		return fleet.Host{}, "", false, err
	}
	hosts, err := fleet.Load(home)
	if err != nil {
		return fleet.Host{}, "", false, err
	}
	if h, err = fleet.Find(hosts, hostName); err != nil {
		return fleet.Host{}, "", false, noHost(home, err)
	}
	return h, seatName, true, nil
}

// forward runs the verb on the host with this terminal's stdin, stdout and
// stderr, and exits as the remote pantty did; an answer that could not be had
// is exit 4 with the reason.
func forward(h fleet.Host, args ...string) error {
	r := h.Run(context.Background(), fleet.Call{Args: args, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	return remoteExit(r)
}

// remoteExit is the exit a reply makes here: the remote pantty's own code (its
// words are already on stderr), or 4 with the reason.
func remoteExit(r fleet.Reply) error {
	if r.Unknown() {
		return codedError{exitUnknown, r.Reason}
	}
	if r.Code != 0 {
		return codedError{r.Code, ""}
	}
	return nil
}

// boolArgs are the named boolean flags that are set, as the remote takes them.
func boolArgs(c *cli.Context, names ...string) []string {
	var out []string
	for _, n := range names {
		if c.Bool(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}
