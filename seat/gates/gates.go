// Package gates answers "may this harness run as a resident seat?" from a dated
// registry shipped with pantty (registry.toml, compiled in) plus the local
// measurements under $PANTTY_HOME/facts/.
//
// The answer is the adoption table of the Pantty overview, in its order (the
// hardest gate, compaction, first), plus the dispatch-safety gate. Every gate is
// pass, warn or fail, says why, and carries the table's own consequence of
// failing. Dates decide as much as statuses: past a row's revisit date a gate
// warns; past its fail_after it fails, unless a fresh local measurement covers
// it. Time is an argument, never read here, so tests inject the clock.
package gates

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// Status is one gate's outcome.
type Status string

const (
	Pass Status = "pass"
	Warn Status = "warn" // passes, but its evidence is past its revisit date (or holds board text back)
	Fail Status = "fail"
)

// Gate is one row of the adoption table, judged.
type Gate struct {
	Name        string `json:"gate"`
	Question    string `json:"question"`
	Requires    string `json:"requires"`
	Status      Status `json:"status"`
	Reason      string `json:"reason"`
	Consequence string `json:"consequence"` // the table's "if absent"
	// Fix is what to do about a fail or a warning ("" on pass).
	Fix string `json:"fix,omitempty"`
	// BlocksResident: a fail of this gate rules out the resident shape.
	BlocksResident bool       `json:"blocks_resident"`
	Evidence       []Evidence `json:"evidence"`
}

// Evidence is one dated answer a gate was judged on.
type Evidence struct {
	Row       string    `json:"row"`    // the registry row (submit, cancel, …) or "dispatch"
	Source    string    `json:"source"` // "registry …" or the local facts file
	Status    string    `json:"status"` // the row's met / unmet / unmeasured
	How       string    `json:"how"`
	AsOf      time.Time `json:"as_of"`
	Revisit   time.Time `json:"revisit"`
	FailAfter time.Time `json:"fail_after"`
	Sources   []string  `json:"sources,omitempty"`
}

// Verdict is the adoption table for one harness at one moment.
type Verdict struct {
	Harness     string `json:"harness"`
	Version     string `json:"version"`      // as observed; "" when not
	Range       string `json:"range"`        // the registry entry's versions; "" when none covers it
	VersionNote string `json:"version_note"` // how the version was decided
	Registry    string `json:"registry"`     // where the registry was read from
	Path        string `json:"path"`         // the submission path the registry rows were established on
	// Transport is the seat.toml transport judged: tmux (the registry's rows
	// and the local contract.toml), or another path a harness has (Codex's
	// app-server), judged by its own local contract alone.
	Transport string    `json:"transport"`
	Now       time.Time `json:"evaluated_at"` // the clock the dates were judged against
	Gates     []Gate    `json:"gates"`        // the table's order, then dispatch
	// ResidentAllowed: every gate that rules out the resident shape passed (a
	// warning passes).
	ResidentAllowed bool `json:"resident_allowed"`
	// AutoCompaction: an automated compaction policy (compaction.threshold) is
	// allowed; false when the context gate fails or residency is ruled out.
	AutoCompaction bool   `json:"auto_compaction_allowed"`
	Summary        string `json:"summary"`
}

// Gate returns the named gate.
func (v Verdict) Gate(name string) Gate {
	for _, g := range v.Gates {
		if g.Name == name {
			return g
		}
	}
	return Gate{}
}

// Label names what was judged: "sim 0.1" or, with no observed version, "claude-code 2.1.x".
func (v Verdict) Label() string {
	switch {
	case v.Version != "":
		return v.Harness + " " + v.Version
	case v.Range != "" && v.Range != "*":
		return v.Harness + " " + v.Range
	}
	return v.Harness
}

// row is the adoption table of the Pantty overview ("When resident mode is worth
// using"), in its order, each question with what residency requires and the
// table's own consequence when it is absent, plus the dispatch gate of its
// evaluation checklist. ops are the registry rows that answer it.
type tableRow struct {
	name, question, requires, consequence string
	blocks                                bool // a fail rules out the resident shape
	ops                                   []string
}

var table = []tableRow{
	{"compaction", "Can the seat cross compaction without losing procedure detail?",
		"Pre-hook, adapter-triggered compact, post-injection", "Run turn-spawned", true, []string{"compaction"}},
	{"cancel", "Can an in-flight turn be stopped externally?",
		"Adapter-level cancel", "Run turn-spawned with a supervisor ceiling", true, []string{"cancel"}},
	{"context", "Can policy see reclaimable pressure separately?",
		"Decomposed context signal", "Do not automate resident compaction policy", false, []string{"context"}},
	{"completion", "Can completion and capability be proven?",
		"Turn-end evidence plus work-path liveness", "Do not advance the cursor or declare health", true, []string{"submit", "liveness"}},
	{"continuity", "Does the deployment need unattended continuity?",
		"External recovery parent and session-preserving ladder", "The simpler seat shape may be the better fit", false, []string{"resume"}},
	{"dispatch", "Is board text kept out of the command parser on this exact path?",
		"A dated dispatch measurement of this path whose control dispatched, with its stored artifacts",
		"Do not paste board text on this path: re-measure", true, []string{"dispatch"}},
}

// Evaluate judges harness (at version, "" when not observed) against the registry
// in force (Load) and a local dispatch measurement (nil when there is none), at
// now. A registry that cannot be read fails every gate.
func Evaluate(harness, version string, local *state.FactsFile, now time.Time) Verdict {
	r, err := Load()
	if err != nil {
		return failAll(harness, version, now, "the gates registry could not be read: "+err.Error(),
			"fix or unset $"+RegistryEnv)
	}
	return r.Evaluate(harness, version, local, now)
}

// Evaluate judges harness against this registry; see the package Evaluate.
func (r *Registry) Evaluate(harness, version string, local *state.FactsFile, now time.Time) Verdict {
	return r.evaluate(harness, version, config.TransportTmux, local, nil, nil, now)
}

// evaluate also takes the error of reading the local facts file (neither missing
// nor decodable): the driver would refuse to start on it, so the dispatch gate fails.
//
// contract is the contract measured locally for this version on transport
// (nil when none): its rows judge before the registry's, and it alone can
// judge a version no registry range covers. The registry's rows are the tmux
// path's: another transport is judged by its local contract alone.
func (r *Registry) evaluate(harness, version, transport string, local *state.FactsFile, localErr error, contract *state.Contract, now time.Time) Verdict {
	e, note := r.find(harness, version)
	if transport != config.TransportTmux {
		e, note = nil, ""
	}
	if e == nil && contract != nil {
		e = &Entry{Name: harness, Versions: version, Path: contract.Path}
		note = fmt.Sprintf("%s: no registry range covers it on the %s path; judged by the local measurement %s alone", version, transport, state.ContractPath("$PANTTY_HOME", harness, version, transport))
	}
	if e == nil {
		why := fmt.Sprintf("the registry has no entry for %s", harness)
		if version != "" {
			why = fmt.Sprintf("the registry has no entry covering %s %s (have %s)", harness, version, r.ranges(harness))
		}
		fix := "measure it on this path and record it in a registry ($" + RegistryEnv + "), or update pantty"
		if version != "" {
			// A local contract of this version covers it (above): the one
			// command that does so, free, on a throwaway seat.
			fix = "measure it on this machine: pantty measure contract --harness " + harness + " (then pantty measure dispatch --harness " + harness + ")"
		}
		if transport != config.TransportTmux {
			why = fmt.Sprintf("no contract measured here for %s %s on the %s path (the registry's rows are the tmux path's)", harness, orUnknown(version), transport)
			fix = "measure it on this machine: " + measureCmd(harness, transport)
		}
		v := failAll(harness, version, now, why+": unmeasured", fix)
		v.Registry, v.Transport = r.Origin, transport
		v.offTmux()
		if transport != config.TransportTmux {
			// Not failed: not measured here. Say so, with the command.
			v.Summary = "not measured on this machine: " + measureCmd(harness, transport) + " (a seat with transport = \"auto\" runs on tmux meanwhile)"
		}
		return v
	}
	if version != "" && note == "" {
		note = "observed " + version
	}
	v := Verdict{Harness: harness, Version: version, Range: e.Versions, VersionNote: note,
		Registry: r.Origin, Path: e.Path, Transport: transport, Now: now}
	for _, t := range table {
		var g Gate
		switch {
		case t.name == "dispatch" && transport != config.TransportTmux:
			g = dataDispatch(t, contract, now)
		case t.name == "dispatch":
			g = dispatchGate(t, *e, version, local, localErr, now)
		default:
			g = registryGate(t, *e, contract, now)
		}
		v.Gates = append(v.Gates, g)
	}
	v.decide()
	v.offTmux()
	return v
}

func (r *Registry) ranges(harness string) string {
	var out []string
	for _, e := range r.Harness {
		if e.Name == harness {
			out = append(out, e.Versions)
		}
	}
	return strings.Join(out, ", ")
}

// decide draws the verdict from the gates.
func (v *Verdict) decide() {
	v.ResidentAllowed, v.AutoCompaction = true, true
	var fails []string
	for _, g := range v.Gates {
		if g.Status != Fail {
			continue
		}
		fails = append(fails, g.Name)
		if g.BlocksResident {
			v.ResidentAllowed = false
		}
		if g.Name == "context" {
			v.AutoCompaction = false
		}
	}
	switch {
	case !v.ResidentAllowed:
		v.AutoCompaction = false
		v.Summary = mustTurn + " (failing: " + strings.Join(fails, ", ") + ")"
	case len(fails) > 0:
		v.Summary = "resident allowed, with consequences (failing: " + strings.Join(fails, ", ") + ")"
	default:
		v.Summary = "resident allowed"
	}
}

func failAll(harness, version string, now time.Time, why, fix string) Verdict {
	v := Verdict{Harness: harness, Version: version, Now: now}
	for _, t := range table {
		g := Gate{Name: t.name, Question: t.question, Requires: t.requires,
			Consequence: t.consequence, BlocksResident: t.blocks, Status: Fail, Reason: why, Fix: fix}
		if t.blocks {
			g.Fix = turnFix + ", or " + fix
		}
		v.Gates = append(v.Gates, g)
	}
	v.decide()
	return v
}

// registryGate judges a gate answered by measured rows: each row from the
// local contract measurement of this version when it has the row and is not
// past its fail_after, else from the registry. A row must be met and not past
// fail_after; past revisit it warns.
func registryGate(t tableRow, e Entry, contract *state.Contract, now time.Time) Gate {
	g := Gate{Name: t.name, Question: t.question, Requires: t.requires, Consequence: t.consequence,
		BlocksResident: t.blocks, Status: Pass}
	on := config.TransportTmux
	if contract != nil {
		on = contract.On()
	}
	remeasure := "re-measure (free, on a throwaway seat against the stand-in): " + measureCmd(e.Name, on)
	var reasons []string
	for _, op := range t.ops {
		if ev, st, why, ok := localRow(op, contract, now); ok {
			g.Evidence = append(g.Evidence, ev)
			reasons = append(reasons, why)
			g.Status = worse(g.Status, st)
			continue
		}
		row := e.row(op)
		d := e.datesOf(row)
		g.Evidence = append(g.Evidence, Evidence{Row: op, Source: "registry " + e.Name + " " + e.Versions, Status: row.Status,
			How: row.How, AsOf: d.AsOf, Revisit: d.Revisit, FailAfter: d.FailAfter, Sources: row.Sources})
		st, why := judgeRow(op, row.Status, row.How, d, now)
		reasons = append(reasons, why)
		g.Status = worse(g.Status, st)
	}
	g.Reason = strings.Join(reasons, "; ")
	switch g.Status {
	case Fail:
		g.Fix = turnFix + ", or " + remeasure + ", or update pantty for a newer registry"
		if !t.blocks {
			g.Fix = "accept the consequence, or " + remeasure + ", or update pantty"
		}
	case Warn:
		g.Fix = remeasure + ", or update pantty for a newer registry, before " + day(earliestFailAfter(g.Evidence))
	}
	return g
}

// localRow judges one row from the local contract measurement; ok is false
// when there is none for op or it is past its fail_after (the registry then
// judges, and its answer says when that is past too).
func localRow(op string, c *state.Contract, now time.Time) (Evidence, Status, string, bool) {
	if c == nil {
		return Evidence{}, "", "", false
	}
	r, ok := c.Row(op)
	if !ok || now.After(c.FailAfter) {
		return Evidence{}, "", "", false
	}
	status := Met
	if !r.Met {
		status = Unmet
	}
	ev := Evidence{Row: op, Source: fmt.Sprintf("local measurement of %s %s on the %s path (artifact %s)", c.Harness, c.Version, c.On(), r.Artifact),
		Status: status, How: r.Value, AsOf: c.AsOf, Revisit: c.Revisit, FailAfter: c.FailAfter}
	switch {
	case !r.Met:
		return ev, Fail, fmt.Sprintf("%s unmet (measured here on %s %s, %s): %s", op, c.Harness, c.Version, day(c.AsOf), r.Value), true
	case now.After(c.Revisit):
		return ev, Warn, fmt.Sprintf("%s met (measured here on %s, %s), but past its revisit date %s (fails after %s)",
			op, c.Version, day(c.AsOf), day(c.Revisit), day(c.FailAfter)), true
	}
	return ev, Pass, fmt.Sprintf("%s met (measured here on %s %s, %s)", op, c.Harness, c.Version, day(c.AsOf)), true
}

// judgeRow is the date rule for one dated answer.
func judgeRow(op, status, how string, d Dates, now time.Time) (Status, string) {
	switch {
	case status == Unmet:
		return Fail, op + " unmet (registry, as of " + day(d.AsOf) + "): " + how
	case status != Met:
		return Fail, op + " unmeasured on this path (registry, as of " + day(d.AsOf) + "): " + how
	case now.After(d.FailAfter):
		return Fail, fmt.Sprintf("%s: the registry's answer (as of %s) is past its fail_after %s and no local measurement covers it",
			op, day(d.AsOf), day(d.FailAfter))
	case now.After(d.Revisit):
		return Warn, fmt.Sprintf("%s met (registry, as of %s), but past its revisit date %s (fails after %s)",
			op, day(d.AsOf), day(d.Revisit), day(d.FailAfter))
	}
	return Pass, op + " met (registry, as of " + day(d.AsOf) + ")"
}

func worse(a, b Status) Status {
	rank := map[Status]int{Pass: 0, Warn: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// earliestFailAfter is the first fail_after among a gate's evidence: the date
// by which it must be re-measured.
func earliestFailAfter(ev []Evidence) time.Time {
	var t time.Time
	for i, e := range ev {
		if i == 0 || e.FailAfter.Before(t) {
			t = e.FailAfter
		}
	}
	return t
}

// dispatchGate judges the dispatch predicate the guard will really use: the local
// facts file when there is one (it takes precedence in the driver, so it is what
// a seat runs on, whatever the registry says), else the registry's dated row.
// Either must be bound to the resident tmux path, carry a control that
// dispatched, and be within its dates; a local file must also point at its
// stored artifacts.
func dispatchGate(t tableRow, e Entry, version string, local *state.FactsFile, localErr error, now time.Time) Gate {
	g := Gate{Name: t.name, Question: t.question, Requires: t.requires, Consequence: t.consequence,
		BlocksResident: t.blocks, Status: Pass}
	remeasure := "re-measure (free, on a throwaway seat): pantty measure dispatch --harness " + e.Name
	if localErr != nil {
		g.Status, g.Reason = Fail, "the local facts file cannot be read, and the driver refuses to start on it: "+localErr.Error()
		g.Fix = remeasure + ", or fix or remove the file"
		return g
	}
	if local != nil {
		return localDispatch(g, e, version, *local, now, remeasure)
	}
	row := e.Dispatch
	d := e.datesOf(row.Row)
	g.Evidence = []Evidence{{Row: "dispatch", Source: "registry " + e.Name + " " + e.Versions, Status: row.Status,
		How: fmt.Sprintf("form %s, sigils %q, control dispatched: %v, on %s; %s; artifacts: %s",
			orUnknown(row.Form), row.Sigils, row.ControlOK, e.Path, row.How, orUnknown(row.Artifacts)),
		AsOf: d.AsOf, Revisit: d.Revisit, FailAfter: d.FailAfter, Sources: row.Sources}}
	st, why := judgeRow("dispatch", row.Status, row.How, d, now)
	switch {
	case st != Fail && !row.ControlOK:
		st, why = Fail, "the registry's dispatch row records no control that dispatched, so it proves nothing"
	case st != Fail:
		if err := guardTakes(row.Form, row.Sigils); err != nil {
			st, why = Warn, "the guard holds all board text back: "+err.Error()
		} else {
			why = fmt.Sprintf("%s: form %s, sigils %q, control dispatched", why, row.Form, row.Sigils)
		}
	}
	g.Status, g.Reason = st, why
	switch st {
	case Fail:
		g.Fix = remeasure
	case Warn:
		g.Fix = remeasure + " before " + day(d.FailAfter)
	}
	return g
}

// localDispatch judges a local facts file. One that is not bound to this harness,
// this version and the resident path, whose control did not dispatch, without its
// artifacts or past its fail_after is not counted, and the gate fails: the driver
// would still use its predicate, so the registry's row cannot vouch for the seat.
func localDispatch(g Gate, e Entry, version string, f state.FactsFile, now time.Time, remeasure string) Gate {
	path := "local facts " + f.Harness + "-" + f.Shape + ".toml"
	g.Evidence = []Evidence{{Row: "dispatch", Source: path, Status: Met,
		How: fmt.Sprintf("form %s, sigils %q, control dispatched: %v, build %q, on %s; %d observations, artifacts in %s",
			orUnknown(f.Form), f.Sigils, f.ControlOK, f.Build, orUnknown(f.Path), len(f.Observations), orUnknown(f.Artifacts)),
		AsOf: f.AsOf, Revisit: f.Revisit, FailAfter: f.FailAfter}}
	notCounted := func(why string) Gate {
		g.Status = Fail
		g.Reason = "the local measurement is not counted: " + why
		g.Fix = remeasure + ", or remove the local facts file to use the registry's row"
		return g
	}
	if !f.ControlOK {
		return notCounted("its control did not dispatch, so it proves nothing (and the driver refuses to start on it)")
	}
	if err := guardTakes(f.Form, f.Sigils); err != nil {
		// Fail-closed, whatever else the file says: the driver holds every message
		// queued rather than paste a string the guard cannot vouch for. Safe, but
		// the seat takes no board text.
		g.Status = Warn
		g.Reason = "the guard holds all board text back (nothing is pasted): " + err.Error()
		g.Fix = remeasure + ", or remove the local facts file"
		return g
	}
	built := VersionOf(f.Build)
	switch {
	case f.Harness != e.Name:
		return notCounted(fmt.Sprintf("it measured harness %q, not %q", f.Harness, e.Name))
	case f.Shape != config.ShapeResident:
		return notCounted(fmt.Sprintf("it measured the %q path, not the resident tmux path", f.Shape))
	case version != "" && built != version:
		return notCounted(fmt.Sprintf("it measured build %q, not version %s", f.Build, version))
	case f.AsOf.IsZero() || f.Revisit.IsZero() || f.FailAfter.IsZero():
		return notCounted("it is not dated (as_of, revisit and fail_after are required)")
	}
	if why := artifactsMissing(f); why != "" {
		return notCounted(why)
	}
	switch {
	case now.After(f.FailAfter):
		return notCounted(fmt.Sprintf("measured %s, past its fail_after %s", day(f.AsOf), day(f.FailAfter)))
	case now.After(f.Revisit):
		g.Status = Warn
		g.Reason = fmt.Sprintf("measured locally %s (form %s, sigils %q, control dispatched), past its revisit date %s (fails after %s)",
			day(f.AsOf), f.Form, f.Sigils, day(f.Revisit), day(f.FailAfter))
		g.Fix = remeasure + " before " + day(f.FailAfter)
		return g
	}
	g.Reason = fmt.Sprintf("measured locally %s on this path (form %s, sigils %q, control dispatched, %d observations with artifacts)",
		day(f.AsOf), f.Form, f.Sigils, len(f.Observations))
	if rf := e.Dispatch.FailAfter; rf != nil && now.After(*rf) {
		g.Reason += "; it covers the registry's row, which is past its fail_after " + day(*rf)
	} else if rf == nil && now.After(e.FailAfter) {
		g.Reason += "; it covers the registry's row, which is past its fail_after " + day(e.FailAfter)
	}
	return g
}

// artifactsMissing checks that a measurement is bound to what it stored: the
// artifacts directory, every observation's artifact, and a raw control that
// dispatched among them.
func artifactsMissing(f state.FactsFile) string {
	if f.Artifacts == "" {
		return "it names no artifacts directory"
	}
	if fi, err := os.Stat(f.Artifacts); err != nil || !fi.IsDir() {
		return "its artifacts directory " + f.Artifacts + " is missing"
	}
	if len(f.Observations) == 0 {
		return "it records no observations"
	}
	control := false
	for _, o := range f.Observations {
		if o.Artifact == "" {
			return fmt.Sprintf("observation %s/%s names no artifact", o.Door, o.Name)
		}
		if _, err := os.Stat(o.Artifact); err != nil {
			return fmt.Sprintf("the artifact of observation %s/%s is missing (%s)", o.Door, o.Name, o.Artifact)
		}
		control = control || (o.Door == "raw" && o.Dispatched)
	}
	if !control {
		return "none of its raw observations dispatched, so no control is recorded"
	}
	return ""
}

// guardTakes reports whether the guard implements a predicate, by asking the
// guard itself (so this never drifts from what the driver will do).
func guardTakes(form, sigils string) error {
	_, err := guard.Guard(guard.Message{ID: "gates-check", Text: "x"}, guard.DispatchFacts{Form: form, Sigils: sigils})
	if errors.Is(err, guard.ErrUnsupportedFacts) {
		return err
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
