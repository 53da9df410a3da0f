package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func measureCommand() *cli.Command {
	rigFlags := func(extra ...cli.Flag) []cli.Flag {
		return append([]cli.Flag{
			&cli.StringFlag{Name: "harness", Value: "sim", Usage: "harness to measure (any registered harness whose adapter has a measure rig)"},
			&cli.StringFlag{Name: "bin", Usage: "the harness binary (default: the adapter's: $PANTTY_CLAUDE_BIN / $PANTTY_CODEX_BIN, else the harness cache)"},
			&cli.DurationFlag{Name: "revisit", Value: 30 * 24 * time.Hour, Usage: "re-measure after this long"},
			&cli.DurationFlag{Name: "fail-after", Value: 90 * 24 * time.Hour, Usage: "gates fail after this long without a re-measurement"},
		}, extra...)
	}
	return &cli.Command{
		Name:  "measure",
		Usage: "measure harness behaviour on pantty's exact submission path",
		Subcommands: []*cli.Command{{
			Name:  "dispatch",
			Usage: "measure which leading characters dispatch as commands; writes $PANTTY_HOME/facts/<harness>-resident.toml",
			Description: "Runs a corpus through the board door (the guard) and through a raw control path on a throwaway\n" +
				"seat in a temporary PANTTY_HOME on its own tmux socket. The raw /clear control must dispatch, or\n" +
				"nothing is written. Each observation points to its stored artifact.",
			Flags:  rigFlags(&cli.StringFlag{Name: "sigils", Usage: "sim only: the sigils the simulator is configured to dispatch"}),
			Action: measureDispatch,
		}, {
			Name:  "contract",
			Usage: "measure the five-operation contract of the installed harness on each path; writes $PANTTY_HOME/facts/<harness>/<version>/contract.toml (contract-app-server.toml beside it)",
			Description: "On a throwaway seat driven by pantty's own driver, against the harness's loopback model-API stand-in\n" +
				"(no key, no cost): submit -> turn end (exactly one model turn), context (floor + reclaimable), cancel\n" +
				"(a slow turn stopped from outside, the next message alone), the compaction cycle (the handoff seen\n" +
				"in a request after /compact), resume (the harness killed, the same session relaunched) and liveness\n" +
				"(a probe turn runs; with the stand-in answering 401 it fails). Every row is written with its artifact,\n" +
				"under the version the harness says it is; the gates judge that version by these rows first.\n" +
				"A harness with a second path (codex: its app server) is measured on each, one throwaway seat\n" +
				"and stand-in per path, and each path's rows are stored on their own (contract.toml for tmux,\n" +
				"contract-app-server.toml); transport = \"auto\" reads the app server's. --transport measures one.\n" +
				"Exit 0 when every row is met, 1 when one is not (the facts are written either way), 2 on bad input.",
			Flags: rigFlags(&cli.StringFlag{Name: "registry-rows", Usage: "copy the artifacts to DIR/<harness>-<version>/ and print the registry rows that cite them (scripts/measure-registry.sh); the tmux path's, the registry's rows being that path's"},
				&cli.StringFlag{Name: "transport", Usage: "measure this path only: tmux, or app-server for a harness with an app server (default: every path the harness has)"}),
			Action: measureContract,
		}},
	}
}

// openRig makes the adapter's measure rig for the verb; close it when done.
func openRig(c *cli.Context, verb string) (harness.MeasureRig, func(), error) {
	ad, err := harness.AdapterFor(c.String("harness"))
	if err != nil {
		return harness.MeasureRig{}, nil, usageErr("measure %s: %v", verb, err)
	}
	rigOf := ad.Caps().Measure
	if rigOf == nil {
		return harness.MeasureRig{}, nil, usageErr("measure %s: harness %q cannot be measured (its adapter has no stand-in rig)", verb, ad.Name())
	}
	if c.IsSet("sigils") && ad.Name() != "sim" {
		return harness.MeasureRig{}, nil, usageErr("measure %s: --sigils configures the simulator only", verb)
	}
	dir, err := os.MkdirTemp("", "pantty-measure-")
	if err != nil {
		return harness.MeasureRig{}, nil, err
	}
	spec := harness.MeasureSpec{Bin: c.String("bin"), Dir: dir}
	if name := ad.Caps().Binary; name != "" {
		spec.OnPath, _ = exec.LookPath(name) // "" when it is not there
	}
	if c.IsSet("sigils") {
		v := c.String("sigils")
		spec.Sigils = &v
	}
	t, err := rigOf(spec)
	if err != nil {
		os.RemoveAll(dir)
		return harness.MeasureRig{}, nil, fmt.Errorf("measure %s: %v (or pass --bin)", verb, err)
	}
	return t, func() {
		if t.Close != nil {
			t.Close()
		}
		os.RemoveAll(dir)
	}, nil
}

func measureOptions(c *cli.Context) (measure.Options, error) {
	pantty, err := panttyPath()
	return measure.Options{Pantty: pantty, Revisit: c.Duration("revisit"), Fail: c.Duration("fail-after"),
		PanttyVersion: buildVersion(), Progress: func(l string) { fmt.Printf("  %s\n", l) }}, err
}

// prepareMeasure is every measure verb's start: the state root, the options
// from the flags and the harness's rig (call done when finished).
func prepareMeasure(c *cli.Context, verb string) (string, measure.Options, harness.MeasureRig, func(), error) {
	home, err := homeOf(c)
	if err != nil {
		return "", measure.Options{}, harness.MeasureRig{}, nil, err
	}
	o, err := measureOptions(c)
	if err != nil {
		return "", o, harness.MeasureRig{}, nil, err
	}
	t, done, err := openRig(c, verb)
	return home, o, t, done, err
}

func measureContract(c *cli.Context) error {
	paths := gates.Transports(c.String("harness"))
	if on := c.String("transport"); c.IsSet("transport") {
		if !slices.Contains(paths, on) {
			return usageErr("measure contract: --transport %q: harness %q runs on %s", on, c.String("harness"), strings.Join(paths, " or "))
		}
		paths = []string{on}
	}
	unmet := 0
	for _, on := range paths {
		n, err := measureContractOn(c, on)
		if err != nil {
			return err
		}
		unmet += n
	}
	if unmet > 0 {
		return fmt.Errorf("%d row(s) of %s not met on %s: the gates judge this version by them (pantty gates %s)", unmet, c.String("harness"), strings.Join(paths, " and "), c.String("harness"))
	}
	return nil
}

// measureContractOn runs the battery on one transport with a rig of its own
// (its stand-in's request log and the harness's home are the run's alone)
// and prints its rows; it returns how many were not met.
func measureContractOn(c *cli.Context, on string) (int, error) {
	home, o, t, done, err := prepareMeasure(c, "contract")
	if err != nil {
		return 0, err
	}
	defer done()
	o.Transport = on
	began := time.Now()
	k, err := measure.Contract(home, t, o)
	if err != nil {
		return 0, err
	}
	say("%s %s (%s) on the %s path: contract measured in %s on %s; facts %s", k.Harness, k.Version, k.Build, k.On(),
		time.Since(began).Round(time.Second), k.Path, state.ContractPath(home, k.Harness, k.Version, k.On()))
	unmet := 0
	for _, r := range k.Rows {
		mark := "met"
		if !r.Met {
			mark, unmet = "UNMET", unmet+1
		}
		say("  %-10s %-5s %s", r.Name, mark, r.Value)
	}
	if dir := c.String("registry-rows"); dir != "" && on == config.TransportTmux {
		// The registry's rows are the tmux path's (gates.Registry).
		if err := printRegistryRows(k, dir); err != nil {
			return unmet, err
		}
	}
	return unmet, nil
}

func measureDispatch(c *cli.Context) error {
	home, o, t, done, err := prepareMeasure(c, "dispatch")
	if err != nil {
		return err
	}
	defer done()
	f, err := measure.Run(home, t, o)
	if err != nil {
		return err
	}
	say("%s: form %s, sigils %q (control dispatched: %v); %d observations, artifacts in %s",
		f.Harness, f.Form, f.Sigils, f.ControlOK, len(f.Observations), f.Artifacts)
	for _, o := range f.Observations {
		status := "reached the model"
		switch {
		case o.Refused != "":
			status = "refused at the door"
		case o.Dispatched:
			status = "DISPATCHED"
		case !o.ReachedModel:
			status = "no outcome seen"
		}
		say("  %-5s %-14s %s", o.Door, o.Name, status)
	}
	return nil
}

// printRegistryRows copies a contract's artifacts under dir and prints its
// rows in the registry's form, each citing its artifact there: how the rows
// pantty ships are produced from the battery (scripts/measure-registry.sh).
func printRegistryRows(k state.Contract, dir string) error {
	dst := filepath.Join(dir, k.Harness+"-"+k.Version)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	fmt.Printf("# %s %s (%s), measured %s by pantty measure contract on %s\n", k.Harness, k.Version, k.Build, k.AsOf.Format("2006-01-02"), k.Path)
	for _, r := range k.Rows {
		b, err := os.ReadFile(r.Artifact)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, filepath.Base(r.Artifact))
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
		status := gates.Met
		if !r.Met {
			status = gates.Unmet
		}
		fmt.Printf("\n[harness.%s]\nstatus = %q\nhow = %q\nsources = [%q]\n", r.Name, status, r.Value,
			fmt.Sprintf("%s (pantty measure contract, %s %s, %s)", to, k.Harness, k.Version, k.AsOf.Format("2006-01-02")))
	}
	return nil
}
