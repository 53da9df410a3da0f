package main

import (
	"fmt"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/termtext"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/urfave/cli/v2"
)

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
					&cli.StringFlag{Name: "harness", Usage: "sim | claude-code | codex", Required: true},
					&cli.StringFlag{Name: "workdir", Usage: "directory the harness works in", Required: true},
					&cli.StringSliceFlag{Name: "env", Usage: "KEY=VALUE added to the harness environment (repeatable)"},
				},
				Action: seatInit,
			},
			{
				Name:      "start",
				Usage:     "start the seat's harness in tmux and its driver (refused, exit 3, while a live driver holds it)",
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
					"harness will see, and print what was written; refused while a driver holds the seat",
				ArgsUsage: "NAME",
				Action:    seatPrepareHome,
			},
			{Name: "stop", Usage: "stop driver and harness; all state stays", ArgsUsage: "NAME", Action: seatStop},
			{Name: "list", Usage: "list seats with intent, owner and phase", Flags: []cli.Flag{jsonFlag()}, Action: seatList},
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
			{Name: "inbox", Usage: "list the seat's messages and their states", ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag()}, Action: seatInbox},
			seatShowCommand(),
			seatDoneCommand(),
		},
	}
}

func seatInit(c *cli.Context) error {
	s, err := seatArg(c, false)
	if err != nil {
		return err
	}
	env := map[string]string{}
	for _, kv := range c.StringSlice("env") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("--env %q: want KEY=VALUE", kv)
		}
		env[k] = v
	}
	if err := seat.InitConfig(s, c.String("harness"), c.String("workdir"), env); err != nil {
		return err
	}
	say("wrote %s (every key listed with its comment and default; edit it, then 'pantty seat start %s')", s.ConfigPath(), s.Name)
	if h := c.String("harness"); h != "sim" {
		say("running a real %s seat (API key or login, base URL, first-run dialogs, permissions, schedulers): docs/real-seats.md; 'pantty seat prepare-home %s' answers the first-run dialogs ahead", h, s.Name)
	}
	return nil
}

// seatAdapter loads the seat's config and the adapter of its harness.
func seatAdapter(s seat.Seat) (seat.Config, seat.Adapter, error) {
	cfg, err := s.LoadConfig()
	if err != nil {
		return cfg, nil, err
	}
	ad, err := seat.AdapterFor(cfg.Harness)
	return cfg, ad, err
}

// seatPrepareHome exposes the adapter's PrepareSeatHome: what tests and
// `measure` did to start a harness without its first-run dialogs, for a person
// setting up a real seat.
func seatPrepareHome(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	cfg, ad, err := seatAdapter(s)
	if err != nil {
		return err
	}
	if o, live, _ := s.LiveOwner(); live {
		// The harness rewrites its own files while it runs; a write now could be lost.
		return fmt.Errorf("%w: seat %s is held by %s: stop it first ('pantty seat stop %s')", seat.ErrOwned, s.Name, o.Holder, s.Name)
	}
	prepare := ad.Caps().PrepareSeatHome
	if prepare == nil {
		say("the %s harness asks no first-run questions: nothing to prepare", cfg.Harness)
		return nil
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	wrote, err := prepare(s, cfg, pantty)
	if err != nil {
		return err
	}
	for _, l := range wrote {
		say("%s", l)
	}
	return nil
}

func seatStart(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	if err := startGates(s); err != nil {
		return err
	}
	pantty, err := panttyPath()
	if err != nil {
		return err
	}
	opts := seat.StartOptions{Takeover: c.String("takeover"), RefreshEnv: c.Bool("refresh-env"), Pantty: pantty,
		Warn: func(line string) { fmt.Fprintf(os.Stderr, "pantty: %s\n", line) }}
	if isTerminal(os.Stderr) {
		opts.Progress = func(line string) { fmt.Fprintf(os.Stderr, "  %s …\n", line) }
	}
	p, err := seat.Start(s, opts)
	if err != nil {
		return err
	}
	if p.State == seat.StateEnvRecorded {
		say("seat %s runs (holder %s): recorded this shell's environment in launch-env.toml for its next launch; the live harness keeps its own until then ('pantty seat stop %s' and start to apply it now)", s.Name, p.Holder, s.Name)
		return nil
	}
	how := "started"
	if p.Adopted {
		how = "adopted its live harness"
	}
	say("seat %s %s: holder %s, session %s", s.Name, how, p.Holder, p.Session)
	return nil
}

func seatStop(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	if err := seat.Stop(s); err != nil {
		return err
	}
	say("seat %s stopped (state kept in %s)", s.Name, s.Dir)
	return nil
}

func seatList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("seat list takes no arguments")
	}
	home, err := homeOf(c)
	if err != nil {
		return err
	}
	names, err := seat.List(home)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return seatListJSON(home, names)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tHARNESS\tINTENT\tOWNER\tPHASE\tQUEUED\tSESSION")
	now := time.Now()
	for _, n := range names {
		s, _ := seat.Open(home, n)
		row := []string{n, "unknown", "unknown", "none", "unknown", "unknown", "unknown"}
		if cfg, err := s.LoadConfig(); err == nil {
			row[1] = cfg.Harness
		} else {
			row[1] = "bad seat.toml"
		}
		if in, err := s.ReadIntent(); err == nil {
			row[2] = in.Want
		}
		if o, live, err := s.LiveOwner(); err != nil {
			row[3] = "unreadable"
		} else if live {
			row[3] = o.Holder
		}
		if hb, err := s.ReadHeartbeat(); err == nil {
			row[4] = hb.Phase
			if hb.Stale(now) {
				row[4] += " (stale)"
			}
		}
		if es, err := s.Entries(); err == nil {
			q := 0
			for _, e := range es {
				if !seat.Final(e.Status.State) {
					q++
				}
			}
			row[5] = fmt.Sprint(q)
		}
		if sess, err := s.ReadSession(); err == nil {
			row[6] = sess.ID
		}
		for i := range row {
			row[i] = termtext.Line(row[i])
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

func seatAttach(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	sess, err := s.ReadSession()
	if err != nil {
		return fmt.Errorf("seat %s has no session yet (start it first): %w", s.Name, err)
	}
	// Relay first, then attach: the driver stops submitting before the person
	// can type, and a submission already in flight finishes normally.
	_, live, _ := s.LiveOwner()
	if live {
		if _, err := s.Ask(seat.Request{Kind: seat.CtlRelay, Args: "on"}, 15*time.Second); err != nil {
			return err
		}
		defer s.Ask(seat.Request{Kind: seat.CtlRelay, Args: "off"}, 15*time.Second)
	}
	cmd := exec.Command("tmux", "-u", "-S", sess.Socket, "attach-session", "-t", "="+sess.TmuxName)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

func seatWatchPane(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	sess, err := s.ReadSession()
	if err != nil {
		return fmt.Errorf("seat %s has no session yet (start it first): %w", s.Name, err)
	}
	// Read-only: this client cannot type, so the driver stays in direct mode.
	return syscall.Exec("/usr/bin/env", []string{"env", "tmux", "-u", "-S", sess.Socket, "attach-session", "-r", "-t", "=" + sess.TmuxName}, os.Environ())
}

func seatRelay(c *cli.Context) error {
	s, rest, err := steered(c, "seat relay")
	if err != nil {
		return err
	}
	if len(rest) > 0 || !c.Bool("off") {
		return usageErr("usage: pantty seat relay NAME --off  (relay is entered by attaching; --off is for when observation fails)")
	}
	return ask(s, seat.Request{Kind: seat.CtlRelay, Args: "force-off"}, 15*time.Second)
}

// steered resolves the seat a steering command names (NAME [-- REST...]):
// it must exist and a live driver must be there to act (only the driver writes
// to the pane). Callers inside a seat were refused before (callers.go).
func steered(c *cli.Context, what string) (seat.Seat, []string, error) {
	args := c.Args().Slice()
	if len(args) < 1 {
		return seat.Seat{}, nil, usageErr("usage: pantty %s %s", what, c.Command.ArgsUsage)
	}
	home, err := homeOf(c)
	if err != nil {
		return seat.Seat{}, nil, err
	}
	s, err := seat.Existing(home, args[0])
	if err != nil {
		return s, nil, err
	}
	rest := args[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if _, live, _ := s.LiveOwner(); !live {
		return s, nil, fmt.Errorf("seat %s has no live driver to act on %s (start it first)", s.Name, what)
	}
	return s, rest, nil
}

func seatCmd(c *cli.Context) error {
	s, rest, err := steered(c, "seat command")
	if err != nil {
		return err
	}
	if len(rest) == 0 || !strings.HasPrefix(rest[0], "/") {
		return usageErr("a command starts with '/': pantty seat command NAME -- /compact [ARGS]")
	}
	_, ad, err := seatAdapter(s)
	if err != nil {
		return err
	}
	cmd, err := seat.NewCommand(ad, rest[0], strings.Join(rest[1:], " "))
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		return usageErr("--wait %s: want a positive duration (e.g. 30s)", wait)
	}
	return ask(s, seat.Request{Kind: seat.CtlCommand, Command: cmd.Name(), Args: cmd.Args(), Wait: seat.Duration{Duration: wait}},
		wait+seat.CommandAcceptWindow+30*time.Second)
}

// waitFlag bounds how long a command waits for the seat to be free (no turn
// running, an empty input box) before it is refused unsent.
func waitFlag() cli.Flag {
	return &cli.DurationFlag{Name: "wait", Value: seat.DefaultCommandWait,
		Usage: "how long to wait for the seat to be idle with an empty input box before refusing, unsent"}
}

func seatCancel(c *cli.Context) error {
	s, rest, err := steered(c, "seat cancel")
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("seat cancel takes only the seat NAME")
	}
	return ask(s, seat.Request{Kind: seat.CtlCancel}, 30*time.Second)
}

func seatRetry(c *cli.Context) error {
	s, id, err := seatAndID(c)
	if err != nil {
		return err
	}
	if err := seat.Retry(s, id); err != nil {
		return err
	}
	say("re-queued %s", id)
	return nil
}

func seatInbox(c *cli.Context) error {
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	es, err := s.Entries()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return seatInboxJSON(s, es)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tREASON\tATTEMPTS\tMENTIONS\tFROM\tTEXT")
	for _, e := range es {
		text := termtext.Cut(e.Msg.Text, 40)
		if e.Msg.Text == "" && e.Status.Detail != "" {
			text = termtext.Cut(e.Status.Detail, 60) // a message set aside: why
		}
		from := e.Msg.From
		if from == "" {
			from = "-"
		}
		reason := e.Status.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", e.Msg.ID, e.Status.State, termtext.Line(reason), e.Status.Attempts, guard.MentionCount(e.Msg.Text), termtext.Line(from), text)
	}
	return tw.Flush()
}

func seatCompact(c *cli.Context) error {
	s, rest, err := steered(c, "seat compact")
	if err != nil {
		return err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	wait := c.Duration("wait")
	if wait <= 0 {
		return usageErr("--wait %s: want a positive duration (e.g. 30s)", wait)
	}
	return ask(s, seat.Request{Kind: seat.CtlCompact, Args: strings.Join(rest, " "), Wait: seat.Duration{Duration: wait}},
		wait+cfg.Compaction.Timeout.Duration+time.Minute)
}

func seatProbe(c *cli.Context) error {
	s, rest, err := steered(c, "seat probe")
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("seat probe takes only the seat NAME")
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return err
	}
	return ask(s, seat.Request{Kind: seat.CtlProbe}, cfg.TurnCeiling.Duration+time.Minute)
}
