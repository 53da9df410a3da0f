package main

// The read verbs across hosts: `status` and `seat list` with --host or
// --all-hosts fan out the remote `pantty … --json` and print one table (a
// remote seat is named HOST:SEAT, as a person types it); a seat named
// HOST:SEAT in `status`, `seat inbox` and `seat show` is the remote verb, its
// output and exit code as they are. A host whose answer could not be had is
// listed unknown with its reason, never as a host with no seats.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/telemetry"
	"github.com/urfave/cli/v2"
)

// hostAnswer is one host of a fleet listing's JSON: its state and, when it
// answered, its own document.
type hostAnswer struct {
	Host    string          `json:"host"`
	State   string          `json:"state"` // ok or unknown
	Reason  string          `json:"reason,omitempty"`
	Version string          `json:"version,omitempty"`
	Seconds float64         `json:"seconds"`
	Doc     json.RawMessage `json:"doc,omitempty"` // the host's own --json answer
}

// fanOutJSON runs `pantty ARGS` (a --json form) on every host and decodes
// each answer into a fresh doc from mk; a host that could not answer, or
// answered with an error, is unknown with the reason.
func fanOutJSON[T any](c *cli.Context, hosts []fleet.Host, args ...string) ([]hostAnswer, []*T) {
	replies := fleet.FanOut(context.Background(), hosts, fleet.Call{Args: args, Bound: c.Duration("host-timeout")})
	answers := make([]hostAnswer, len(hosts))
	docs := make([]*T, len(hosts))
	for i, r := range replies {
		a := hostAnswer{Host: hosts[i].Name, State: "ok", Version: r.Version.Version, Seconds: r.Took.Seconds()}
		var doc T
		switch {
		case r.Unknown():
			a.State, a.Reason = "unknown", r.Reason
		case r.Code != 0:
			a.State, a.Reason = "unknown", fmt.Sprintf("host %s: pantty %s exited %d: %s", hosts[i].Name, args[0], r.Code, lastLineOf(r.Stderr))
		case json.Unmarshal(r.Stdout, &doc) != nil:
			a.State, a.Reason = "unknown", fmt.Sprintf("host %s: pantty %s printed no JSON document it can read", hosts[i].Name, args[0])
		default:
			a.Doc, docs[i] = json.RawMessage(r.Stdout), &doc
		}
		answers[i] = a
	}
	return answers, docs
}

// fleetName is how a seat of host h is named in a fleet listing: HOST:SEAT,
// or the plain name for this machine's own.
func fleetName(h fleet.Host, name string) string {
	if h.IsLocal() {
		return name
	}
	return h.Name + ":" + name
}

// fleetStatus is `status --host|--all-hosts`.
func fleetStatus(c *cli.Context, hosts []fleet.Host, format string) error {
	if format == "prom" {
		return usageErr("--format prom reads one state root: Prometheus scrapes each host's textfile (docs/fleet.md)")
	}
	if c.NArg() != 0 {
		return usageErr("status with --host or --all-hosts lists every seat; one seat is HOST:NAME without them")
	}
	now := time.Now()
	answers, docs := fanOutJSON[telemetry.Document](c, hosts, "status", "--json")
	if format == "json" {
		printLine(struct {
			V     int          `json:"v"`
			At    time.Time    `json:"at"`
			Hosts []hostAnswer `json:"hosts"`
		}{jsonVersion, now.UTC(), answers})
		return unknownHosts(answers)
	}
	out := os.Stdout
	tw := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tSTATE\tSEATS\tLAST SWEEP\tTOOK\tREASON")
	var rows []telemetry.Row
	for i, a := range answers {
		seats, sweep, reason := "-", "-", a.Reason
		if d := docs[i]; d != nil {
			seats = fmt.Sprint(len(d.Seats))
			sweep = sweepText(d.LastSweep)
			if d.LastSweep == nil || d.LastSweep.Stale {
				reason = "recover is not sweeping there: " + hosts[i].Command("recover", "check")
			}
			for _, r := range d.Seats {
				r.Seat = fleetName(hosts[i], r.Seat)
				rows = append(rows, r)
			}
		}
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fs\t%s\n", a.Host, a.State, seats, sweep, a.Seconds, termtext.Line(reason))
	}
	tw.Flush()
	if len(rows) > 0 {
		fmt.Fprintln(out)
		width := 0
		if c.String("output") != "wide" {
			width = outputWidth(out)
		}
		writeTable(out, rows, colourOn(out), width)
	}
	return unknownHosts(answers)
}

// sweepText is a host's last recover sweep for the hosts table.
func sweepText(s *telemetry.Sweep) string {
	if s == nil {
		return "never"
	}
	age := time.Duration(s.AgeSeconds * float64(time.Second)).Round(time.Second)
	text := fmt.Sprintf("%s ago (every %s)", age, time.Duration(s.IntervalSeconds*float64(time.Second)))
	if s.Stale {
		text = "STALE " + text
	}
	return text
}

// unknownHosts is exit 4 when a host's answer is unknown: the listing is
// printed whole, and a script still learns it is not the whole fleet.
func unknownHosts(answers []hostAnswer) error {
	var names []string
	for _, a := range answers {
		if a.State != "ok" {
			names = append(names, a.Host)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return codedError{exitUnknown, fmt.Sprintf("host %s could not be read: its seats are unknown (the reason is in the listing; pantty hosts)", strings.Join(names, ", "))}
}

// fleetSeatList is `seat list --host|--all-hosts`.
func fleetSeatList(c *cli.Context, hosts []fleet.Host) error {
	type listing struct {
		Seats []listedSeat `json:"seats"`
	}
	answers, docs := fanOutJSON[listing](c, hosts, "seat", "list", "--json")
	if c.Bool("json") {
		printLine(struct {
			V     int          `json:"v"`
			Hosts []hostAnswer `json:"hosts"`
		}{jsonVersion, answers})
		return unknownHosts(answers)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tHARNESS\tINTENT\tOWNER\tPHASE\tQUEUED\tSESSION")
	for i, a := range answers {
		if docs[i] == nil {
			fmt.Fprintf(tw, "%s\tunknown\tunknown\tunknown\tunknown\tunknown\t%s\n", a.Host+":*", termtext.Line(a.Reason))
			continue
		}
		for _, s := range docs[i].Seats {
			row := []string{fleetName(hosts[i], s.Seat), orUnknown(s.Harness), orUnknown(s.Intent), orNone(s.Owner), orUnknown(s.Phase), "unknown", orUnknown(s.Session)}
			if s.Queued != nil {
				row[5] = fmt.Sprint(*s.Queued)
			}
			if s.Phase != nil && s.PhaseStale {
				row[4] = "stale: " + *s.Phase
			}
			for j := range row {
				row[j] = termtext.Line(row[j])
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	tw.Flush()
	return unknownHosts(answers)
}

func orUnknown(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}

func orNone(s *string) string {
	if s == nil {
		return "none"
	}
	return *s
}

// lastLineOf is the last non-empty line of a remote's stderr, without its
// "pantty: " prefix.
func lastLineOf(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "pantty: ")
}

// remoteSeat runs the verb for a seat named HOST:SEAT (or --host HOST NAME) on
// that host: ok is false for a seat of this machine, which the verb reads
// itself. args builds the remote command line from the plain seat name.
func remoteSeat(c *cli.Context, name string, args func(seatName string) []string) (ok bool, err error) {
	h, seatName, ok, err := hostOf(c, name)
	if err != nil || !ok {
		return false, err
	}
	return true, forward(h, args(seatName)...)
}
