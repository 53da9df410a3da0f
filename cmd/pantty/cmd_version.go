package main

// `pantty --version`: this build, and the harness versions it was measured
// against (the pinned rows of the shipped gates registry).

import (
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/seat/gates"
	"github.com/urfave/cli/v2"
)

// versionCommand is `pantty version`, the verb form of --version.
func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version and the harness versions it was measured against (as --version)",
		Description: "--json prints one line {v, version, fleet}: fleet is the fleet protocol this pantty speaks\n" +
			"(docs/fleet.md); a fleet's listings run it first on every host to tell a pantty too old.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "one JSON line: the version and the fleet protocol"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("version takes no arguments")
			}
			if c.Bool("json") {
				printLine(fleet.Version{V: jsonVersion, Version: c.App.Version, Fleet: fleet.Protocol})
				return nil
			}
			printVersion(c)
			return nil
		},
	}
}

// helpCommand is `pantty help [COMMAND...]`, the verb form of --help, in the
// tree so that `pantty --help` lists it. runArgs rewrites `pantty help …` to
// `pantty … --help` before the tree is walked; this action runs for the forms
// with a global flag first (`pantty --home DIR help seat`).
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:            "help",
		Usage:           "print the help of pantty or of a command (as --help): pantty help seat send",
		ArgsUsage:       "[COMMAND...]",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			return runArgs(append(append([]string{c.App.Name}, c.Args().Slice()...), "--help"))
		},
	}
}

// buildVersion names this binary: the module version when installed with
// `go install …@vX`, else the VCS revision Go stamped into the build.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel-" + rev + dirty
	}
	if v == "" {
		v = "(devel)"
	}
	return v
}

var versionWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+(\.[0-9]+)+`) })

// printVersion is cli.VersionPrinter: the build, then one line per registry
// entry with its version range, the exact versions its sources name as
// measured, and its dates.
func printVersion(c *cli.Context) {
	w := c.App.Writer
	fmt.Fprintf(w, "pantty %s (%s)\n", c.App.Version, goVersion())
	reg, err := gates.Shipped()
	if err != nil {
		fmt.Fprintf(w, "gates registry: unreadable: %v\n", err)
		return
	}
	writeMeasured(w, reg)
}

func writeMeasured(w io.Writer, reg *gates.Registry) {
	fmt.Fprintln(w, "harnesses measured against (gates registry shipped in this binary):")
	for _, e := range reg.Harness {
		measured := "built in"
		if e.Versions != "*" {
			var vs []string
			for _, s := range e.Sources {
				for _, v := range versionWord().FindAllString(s, -1) {
					if e.Covers(v) && !slices.Contains(vs, v) {
						vs = append(vs, v)
					}
				}
			}
			measured = "measured " + strings.Join(vs, ", ")
			if len(vs) == 0 {
				measured = "no exact version in its sources"
			}
		}
		fmt.Fprintf(w, "  %-12s %-8s %s; as of %s, revisit %s, fail after %s\n", e.Name, e.Versions, measured,
			e.AsOf.Format("2006-01-02"), e.Revisit.Format("2006-01-02"), e.FailAfter.Format("2006-01-02"))
	}
}

func goVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return "go unknown"
}
