package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
	"github.com/urfave/cli/v2"
)

// recoverCommand is the external recovery parent, run by cron, launchd or a
// systemd timer (docs/recover.md).
func recoverCommand() *cli.Command {
	interval := &cli.DurationFlag{Name: "interval", Value: recover.DefaultInterval,
		Usage: "how often the scheduler runs recover (a lock held longer than 5 intervals is reported stuck)"}
	sched := []cli.Flag{
		&cli.BoolFlag{Name: "cron", Usage: "a crontab line"},
		&cli.BoolFlag{Name: "launchd", Usage: "a launchd agent (StartInterval)"},
		&cli.BoolFlag{Name: "systemd", Usage: "a systemd user service and timer"},
	}
	return &cli.Command{
		Name:  "recover",
		Usage: "one recovery sweep over every seat meant to run: observe, classify ok/dead/unknown, act on dead, verify",
		Description: "Run it every minute from cron, launchd or a systemd timer ('pantty recover install').\n" +
			"Exit: 0 done (or another run is sweeping), 1 a seat is still dead, 4 a seat or the sweep lock could not be observed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "observe and classify, print what would be done, change nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.StringFlag{Name: "textfile", Usage: "after the sweep, write every seat's readings in the Prometheus text format to `PATH` (*.prom, for node_exporter's textfile collector)"},
			interval,
		},
		Action: recoverSweep,
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "install the scheduler entry that runs 'pantty recover' (or --print it)",
				Flags: append(append([]cli.Flag{}, sched...),
					&cli.BoolFlag{Name: "print", Usage: "print the entry instead of installing it"},
					interval,
					&cli.StringFlag{Name: "crontab", Usage: "crontab program (default $" + recover.CrontabEnv + ", else crontab)"},
					&cli.StringFlag{Name: "unit-dir", Usage: "systemd user unit / LaunchAgents directory (default the scheduler's, or $" + recover.SystemdDirEnv + " / $" + recover.LaunchdDirEnv + ")"},
					&cli.StringFlag{Name: "systemctl", Usage: "systemctl program (default $" + recover.SystemctlEnv + "; not run for a non-default unit dir unless given)"},
					&cli.StringFlag{Name: "launchctl", Usage: "launchctl program (default $" + recover.LaunchctlEnv + ")"},
				),
				Action: recoverInstall,
			},
			{
				Name:  "uninstall",
				Usage: "remove what 'recover install' added (every recorded entry, or only the kinds named)",
				Flags: append(append([]cli.Flag{}, sched...),
					&cli.StringFlag{Name: "crontab", Usage: "crontab program (default the one install ran)"}),
				Action: recoverUninstall,
			},
			{
				Name:   "check",
				Usage:  "assert the installed entry is present and loadable, runs in the scheduler's environment, and has swept within two intervals",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}},
				Action: recoverCheck,
			},
		},
	}
}

// seatDoneCommand is the finalizer's door: `pantty seat done NAME`.
func seatDoneCommand() *cli.Command {
	return &cli.Command{
		Name: "done",
		Usage: "the seat finished its work: leave the cleanup marker; 'pantty recover' verifies the workdir " +
			"(clean, nothing unpushed), stops the seat and removes the marker",
		ArgsUsage: "NAME",
		Action:    seatDone,
	}
}

func seatDone(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	// A seat may declare itself done (the polecat's own "done"); the workdir
	// checks are the guard. It may not declare another seat done.
	by := "seat done (outside any seat)"
	if w, inside := proc.Inside(); inside {
		if err := proc.RefuseOtherSeat(s, "seat done"); err != nil {
			return err
		}
		by = "seat done (from inside seat " + w.Name + ")"
	}
	created, err := state.MarkDone(s, by, time.Now())
	if err != nil {
		return err
	}
	if !created {
		say("seat %s: cleanup already pending (%s)", s.Name, s.CleanupPath())
		return nil
	}
	say("seat %s: cleanup marker written (%s); the next 'pantty recover' verifies the workdir and stops the seat", s.Name, s.CleanupPath())
	return nil
}

func recoverSweep(c *cli.Context) error {
	if c.NArg() != 0 {
		if best := nearest(c.Args().First(), c.Command.Subcommands); best != "" {
			return usageErr("unknown command %q (did you mean 'pantty recover %s'?)", c.Args().First(), best)
		}
		return usageErr("recover takes no arguments (its commands: install, uninstall, check)")
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	// A sweep kills and starts drivers and harnesses: it steers every seat, so
	// a seat's own model may not run it (a dry run only reads).
	if !c.Bool("dry-run") {
		if err := proc.RefuseInside("recover"); err != nil {
			return err
		}
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	rep, err := recover.Sweep(recover.Options{Home: home, Pantty: pantty, DryRun: c.Bool("dry-run"), Interval: c.Duration("interval")})
	if err != nil {
		if rep.Code == 4 || errors.Is(err, state.ErrUnobservable) {
			return codedError{exitUnknown, err.Error()}
		}
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct { // schema v1 (docs/cli.md)
			V int `json:"v"`
			recover.Report
		}{jsonVersion, rep}); err != nil {
			return err
		}
	} else {
		printReport(os.Stdout, rep)
	}
	if path := c.String("textfile"); path != "" && !rep.DryRun && rep.Busy == "" {
		rows, err := telemetryReader.Read(home, time.Now())
		if err == nil {
			err = telemetry.WriteTextfileWith(path, rows, telemetry.PromOptions{Home: home, Now: time.Now()})
		}
		if err != nil {
			return fmt.Errorf("recover --textfile %s: %w", path, err)
		}
	}
	if rep.Code != 0 {
		return codedError{rep.Code, ""}
	}
	return nil
}

// printReport is the text form of a sweep: one block per seat, its verdict and
// what was done; provider waits; cleanups. Unknown is never silent.
func printReport(w io.Writer, r recover.Report) {
	if r.Busy != "" {
		fmt.Fprintf(w, "recover: another run is sweeping (%s); this run did nothing\n", r.Busy)
		return
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "recover: %s\n", termtext.Line(n))
	}
	mode := ""
	if r.DryRun {
		mode = " (dry run: nothing changed)"
	}
	fmt.Fprintf(w, "recover %s: %d seat(s), %d tmux call(s), %dms%s\n", r.Home, len(r.Seats), r.TmuxCalls, r.TookMS, mode)
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, s := range r.Seats {
		verdict := s.Verdict
		if verdict == "" {
			verdict = "-"
		}
		head := s.Reason
		if s.Cause != "" {
			head = s.Cause + ": " + s.Reason
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Seat, verdict, termtext.Line(head))
		if s.Rung != "" || s.Floor != "" {
			fmt.Fprintf(tw, "  \t\trung %s, demotion floor %s\n", orTop(s.Rung), orTop(s.Floor))
		}
		if s.Waiting != "" {
			fmt.Fprintf(tw, "  \t\twaiting: %s\n", termtext.Line(s.Waiting))
		}
		for _, l := range s.Launch {
			fmt.Fprintf(tw, "  \t\tcannot launch: %s\n", termtext.Line(l))
		}
		if s.Action != "" {
			fmt.Fprintf(tw, "  \t\t→ %s\n", termtext.Line(s.Action))
		}
		if s.Result != "" {
			fmt.Fprintf(tw, "  \t\t= %s\n", termtext.Line(s.Result))
		}
	}
	tw.Flush()
	for _, p := range r.Providers {
		how := "reset parsed from the refusal"
		if !p.Parsed {
			how = "reset not readable: re-probe then"
		}
		fmt.Fprintf(w, "provider %s: %s until %s (%s left, %s; refused on seat %s; holds %s)\n",
			p.Provider, p.Error, p.Until.Local().Format(time.RFC3339), p.Left, how, p.By, strings.Join(p.Seats, ", "))
	}
	for _, c := range r.Cleanups {
		fmt.Fprintf(w, "cleanup %s: %s — %s (checks: %s; failed attempts %d)\n", c.Seat, c.State, c.Reason, c.Checks, c.Attempts)
	}
}

func orTop(s string) string {
	if s == "" {
		return "top"
	}
	return s
}

func schedKinds(c *cli.Context) []string {
	var k []string
	for _, n := range []string{recover.Cron, recover.Launchd, recover.Systemd} {
		if c.Bool(n) {
			k = append(k, n)
		}
	}
	return k
}

func recoverInstall(c *cli.Context) error {
	kinds := schedKinds(c)
	if len(kinds) != 1 {
		return usageErr("recover install needs exactly one of --cron, --launchd, --systemd")
	}
	home, pantty, err := homeAndPantty(c)
	if err != nil {
		return err
	}
	o := recover.InstallOptions{Kind: kinds[0], Home: home, Pantty: pantty, Interval: c.Duration("interval"),
		Crontab: c.String("crontab"), UnitDir: c.String("unit-dir"), Systemctl: c.String("systemctl"), Launchctl: c.String("launchctl")}
	if c.Bool("print") {
		text, err := recover.Render(o)
		if err != nil {
			return err
		}
		fmt.Print(text)
		return nil
	}
	if _, err := stateRoot(c); err != nil {
		return err
	}
	if err := proc.RefuseInside("recover install"); err != nil {
		return err
	}
	did, err := recover.Install(o)
	for _, d := range did {
		say("%s", d)
	}
	if err != nil {
		return err
	}
	say("installed: 'pantty recover check' asserts it runs")
	return nil
}

func recoverUninstall(c *cli.Context) error {
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	if err := proc.RefuseInside("recover uninstall"); err != nil {
		return err
	}
	did, err := recover.Uninstall(home, schedKinds(c), c.String("crontab"))
	for _, d := range did {
		say("%s", d)
	}
	return err
}

func recoverCheck(c *cli.Context) error {
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	res, err := recover.Check(home, time.Now())
	if err != nil {
		return err
	}
	bad := 0
	for _, r := range res {
		if !r.OK {
			bad++
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		type versioned struct { // schema v1 (docs/cli.md): "v" in each element
			V int `json:"v"`
			recover.CheckResult
		}
		out := make([]versioned, len(res))
		for i, r := range res {
			out[i] = versioned{jsonVersion, r}
		}
		enc.Encode(out)
	} else {
		for _, r := range res {
			state := "OK"
			switch {
			case !r.OK:
				state = "FAILED"
			case r.Pending != "":
				state = "pending: " + r.Pending
			}
			say("%s: %s", r.Kind, state)
			for _, p := range r.Passed {
				say("  ok: %s", p)
			}
			for _, p := range r.Problems {
				say("  problem: %s", p)
			}
		}
	}
	if bad > 0 {
		var why []string
		for _, r := range res {
			why = append(why, r.Problems...)
		}
		return fmt.Errorf("recover check: %s", strings.Join(why, "; "))
	}
	return nil
}
