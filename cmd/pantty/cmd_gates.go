package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func gatesCommand() *cli.Command {
	return &cli.Command{
		Name:      "gates",
		Usage:     "show which adoption gates pass per harness: resident allowed, or must run turn-spawned",
		ArgsUsage: "[HARNESS]",
		Description: "Judges the adoption table (compaction first, then cancel, context, completion, continuity) and\n" +
			"the dispatch gate from the dated registry shipped in this binary (or $" + gates.RegistryEnv + ")\n" +
			"and the local dispatch measurement $PANTTY_HOME/facts/<harness>-resident.toml, for the version\n" +
			"installed: the harness binary (--bin, else its command on PATH) is asked --version, once per\n" +
			"binary change (cached in $PANTTY_HOME/cache/harness-versions.toml). A version no registry range\n" +
			"covers fails every gate. Past a row's revisit date a gate warns; past its fail_after it fails\n" +
			"unless a fresh local measurement covers it. A harness with a second path (codex: its app server,\n" +
			"experimental) is judged once per path, each verdict naming its path: the registry's rows are the\n" +
			"tmux path's, the app-server path is judged by its own local contract alone\n" +
			"($PANTTY_HOME/facts/<harness>/<version>/contract-app-server.toml), and the detail says which path\n" +
			"transport = \"auto\" would take. Without HARNESS: one line per harness and path in the registry;\n" +
			"--json prints one object per path (an array when there are several). Exit 0 whatever the verdict.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the verdict(s) as JSON"},
			&cli.StringFlag{Name: "version", Usage: "judge this harness version (default: the installed binary's --version, else the local facts file's build, else the registry's newest range)"},
			&cli.StringFlag{Name: "bin", Usage: "with HARNESS: the harness binary to ask its version (default: the harness's command on PATH)"},
		},
		Action: gatesShow,
	}
}

func gatesShow(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("gates takes at most one HARNESS (got %d arguments)", c.NArg())
	}
	home, err := homeOf(c)
	if err != nil {
		return err
	}
	reg, err := gates.Load()
	if err != nil {
		return usageErr("%v", err)
	}
	now := time.Now()
	if c.NArg() == 0 {
		if c.IsSet("version") {
			return usageErr("gates --version needs a HARNESS")
		}
		if c.IsSet("bin") {
			return usageErr("gates --bin needs a HARNESS")
		}
		var vs []gates.Verdict
		for _, h := range reg.Harnesses() {
			vs = append(vs, installedVerdicts(home, h, gates.HarnessBinary(h, ""), now)...)
		}
		if c.Bool("json") {
			return printJSON(vs)
		}
		return gatesSummary(reg, vs)
	}
	h := c.Args().First()
	known := false
	for _, n := range reg.Harnesses() {
		known = known || n == h
	}
	if !known {
		return usageErr("gates: the registry (%s) has no harness %q (have %s)", reg.Origin, h, strings.Join(reg.Harnesses(), ", "))
	}
	var vs []gates.Verdict
	switch {
	case c.IsSet("version"):
		for _, on := range gates.Transports(h) {
			vs = append(vs, gates.LocalOn(home, h, c.String("version"), on, now))
		}
	case c.IsSet("bin"):
		bin, err := launch.ResolveBinary(c.String("bin"), os.Getenv("PATH"))
		if err != nil {
			return usageErr("gates --bin: %v", err)
		}
		vs = installedVerdicts(home, h, bin, now)
	default:
		vs = installedVerdicts(home, h, gates.HarnessBinary(h, ""), now)
	}
	if c.Bool("json") {
		if len(vs) == 1 {
			return printJSON(vs[0])
		}
		return printJSON(vs)
	}
	for i, v := range vs {
		if i > 0 {
			say("")
		}
		gatesDetail(home, v)
	}
	return nil
}

// installedVerdicts judges harness on each of its paths at the version the
// binary bin says it is; without one (no binary, or it cannot say) as
// unobserved, and each verdict's note says why.
func installedVerdicts(home, harness, bin string, now time.Time) []gates.Verdict {
	version, note := gates.Installed(home, harness, bin)
	var vs []gates.Verdict
	for _, on := range gates.Transports(harness) {
		v := gates.LocalOn(home, harness, version, on, now)
		if note != "" && (version != "" || v.VersionNote == "") {
			v.VersionNote = note
		} else if note != "" {
			v.VersionNote = note + "; " + v.VersionNote
		}
		vs = append(vs, v)
	}
	return vs
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// gatesSummary prints one line per harness: each gate's status and the verdict.
func gatesSummary(reg *gates.Registry, vs []gates.Verdict) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	head := []string{"HARNESS", "VERSION", "TRANSPORT"}
	if len(vs) > 0 {
		for _, g := range vs[0].Gates {
			head = append(head, strings.ToUpper(g.Name))
		}
	}
	fmt.Fprintln(tw, strings.Join(append(head, "ISOLATION", "VERDICT"), "\t"))
	for _, v := range vs {
		row := []string{v.Harness, versionCell(v), v.Transport}
		for _, g := range v.Gates {
			row = append(row, string(g.Status))
		}
		fmt.Fprintln(tw, strings.Join(append(row, isolationCell(v.Harness), v.Summary), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	say("registry: %s; 'pantty gates HARNESS' shows each question, its evidence and dates, and the consequence", reg.Origin)
	return nil
}

// isolationCell says whether the harness's OS sandbox for the model's shell can
// run on this machine now (the probe a launch runs; a seat's own verdict is in
// status): available, unavailable, or none when the harness has no sandbox
// pantty uses. Codex's probe needs the seat's CODEX_HOME, so it is per seat.
// A harness that runs in pantty's jail (Capabilities.Jail) names it.
func isolationCell(name string) string {
	ad, err := harness.AdapterFor(name)
	if err != nil {
		return "none"
	}
	probe := ad.Caps().ProbeIsolation
	if probe == nil && ad.Caps().Jail != nil {
		if _, err := jail.Probe(map[string]string{"PATH": os.Getenv("PATH")}); err != nil {
			return "unavailable"
		}
		return "available (" + jail.Mechanism + ")"
	}
	if probe == nil {
		return "none"
	}
	if _, err := probe(state.Seat{}, config.Config{}, map[string]string{"PATH": os.Getenv("PATH")}); err != nil {
		if errors.Is(err, launch.ErrPerSeat) {
			return "per seat"
		}
		return "unavailable"
	}
	return "available"
}

func versionCell(v gates.Verdict) string {
	switch {
	case v.Version != "":
		return v.Version
	case v.Range != "":
		return v.Range + " (not observed)"
	}
	return "unknown"
}

// gatesDetail prints the adoption table for one harness on one path.
func gatesDetail(home string, v gates.Verdict) {
	say("%s on the %s path: %s", v.Label(), v.Transport, v.Summary)
	say("  transport  %s", v.Transport)
	if on, why := gates.AutoChoice(home, v.Harness, v.Version, v.Now); on != "" {
		say("  auto       transport = \"auto\" takes %s: %s", on, why)
	}
	say("  registry   %s", v.Registry)
	if v.VersionNote != "" {
		say("  version    %s", v.VersionNote)
	}
	if v.Path != "" {
		say("  path       %s", v.Path)
	}
	say("  isolation  %s", isolationCell(v.Harness))
	say("  judged at  %s", v.Now.UTC().Format(time.RFC3339))
	for i, g := range v.Gates {
		say("")
		say("%d. %-10s %s  %s", i+1, g.Name, strings.ToUpper(string(g.Status)), g.Question)
		say("   requires   %s", g.Requires)
		say("   why        %s", g.Reason)
		for _, e := range g.Evidence {
			say("   evidence   %s [%s] %s: as of %s, revisit %s, fail after %s",
				e.Source, e.Row, e.Status, gateDay(e.AsOf), gateDay(e.Revisit), gateDay(e.FailAfter))
			if !strings.Contains(g.Reason, e.How) {
				say("              %s", e.How)
			}
			if len(e.Sources) > 0 {
				say("              sources: %s", strings.Join(e.Sources, "; "))
			}
		}
		say("   if absent  %s", g.Consequence)
		if g.Fix != "" {
			say("   to do      %s", g.Fix)
		}
	}
	say("")
	switch {
	case !v.ResidentAllowed && v.Transport != config.TransportTmux:
		say("verdict: %s (transport = %q does not take it)", v.Summary, config.TransportAuto)
	case !v.ResidentAllowed:
		say("verdict: must run turn-spawned (shape = %q): %s", config.ShapeTurn, v.Summary)
	case !v.AutoCompaction:
		say("verdict: resident allowed, without an automated compaction policy ([refresh] policy none or self)")
	default:
		say("verdict: resident allowed")
	}
}

func gateDay(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02")
}

// startGates acts on the adoption verdict before `seat start`: a gate that rules
// out the seat's shape or policy refuses the start (exit 2, nothing changed)
// naming the gate and what to do; warnings go to stderr and the start goes on.
// A seat.toml that does not load is left to seat.Start to report.
func startGates(s state.Seat) error {
	cfg, err := s.LoadConfig()
	if err != nil {
		return nil
	}
	_, warnings, err := gates.CheckStart(s.Home, cfg, time.Now())
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "pantty: warning: seat %s: %s\n", s.Name, w)
	}
	if err != nil {
		return usageErr("seat %s: %v", s.Name, err)
	}
	return nil
}
