package gates

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
)

// shipped is the registry compiled into the binary.
//
//go:embed registry.toml
var shipped []byte

// RegistryEnv names a registry file that replaces the shipped one: for a newer
// measurement recorded locally, and for tests (a registry in which a gate fails).
const RegistryEnv = "PANTTY_GATES_REGISTRY"

// Row states.
const (
	Met        = "met"        // established on this path, with sources
	Unmet      = "unmet"      // measured, and absent
	Unmeasured = "unmeasured" // not established on this path
)

// Registry is the dated, per-harness answer to "how is each operation met".
type Registry struct {
	Schema  int     `toml:"schema"`
	Harness []Entry `toml:"harness"`

	// Origin says where it was read from ("shipped with pantty" or a file path).
	Origin string `toml:"-"`
}

// Entry is one harness over one version range.
type Entry struct {
	Name     string `toml:"name"`
	Versions string `toml:"versions"` // "*", "2.1.x", "0.171.x" or an exact version
	Title    string `toml:"title"`
	Path     string `toml:"path"` // the submission path the rows were established on
	Dates
	Sources []string `toml:"sources"`

	Submit     Row         `toml:"submit"`
	Cancel     Row         `toml:"cancel"`
	Context    Row         `toml:"context"`
	Compaction Row         `toml:"compaction"`
	Liveness   Row         `toml:"liveness"`
	Resume     Row         `toml:"resume"`
	Dispatch   DispatchRow `toml:"dispatch"`
}

// Dates are the three dates every registry answer carries.
type Dates struct {
	AsOf      time.Time `toml:"as_of"`
	Revisit   time.Time `toml:"revisit"`
	FailAfter time.Time `toml:"fail_after"`
}

// Row is how one operation is met on the entry's path. Its own dates, when
// given (all three), replace the entry's.
type Row struct {
	Status    string     `toml:"status"`
	How       string     `toml:"how"`
	Sources   []string   `toml:"sources,omitempty"`
	AsOf      *time.Time `toml:"as_of,omitempty"`
	Revisit   *time.Time `toml:"revisit,omitempty"`
	FailAfter *time.Time `toml:"fail_after,omitempty"`
}

// DispatchRow is the dispatch measurement shipped for the entry's path: the
// predicate the guard is built against, and whether its control dispatched.
type DispatchRow struct {
	Row
	Form      string `toml:"form,omitempty"`
	Sigils    string `toml:"sigils,omitempty"`
	ControlOK bool   `toml:"control_ok,omitempty"`
	Artifacts string `toml:"artifacts,omitempty"`
}

// Shipped decodes the registry compiled into the binary.
func Shipped() (*Registry, error) { return Parse("registry.toml (shipped with pantty)", shipped) }

// Load returns the registry in force: the file $PANTTY_GATES_REGISTRY names, or
// the shipped one. A named file that cannot be read or does not validate is an
// error, never a silent fall-back to the shipped registry.
func Load() (*Registry, error) {
	p := os.Getenv(RegistryEnv)
	if p == "" {
		return Shipped()
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("gates registry ($%s): %w", RegistryEnv, err)
	}
	return Parse(p+" ($"+RegistryEnv+")", data)
}

// Parse decodes a registry strictly (an unknown key is an error naming the line)
// and validates it: every row present, every date given and in order.
func Parse(origin string, data []byte) (*Registry, error) {
	var r Registry
	if err := fsatomic.DecodeStrict(origin, data, &r); err != nil {
		return nil, fmt.Errorf("gates registry: %w", err)
	}
	r.Origin = origin
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("gates registry %s: %w", origin, err)
	}
	return &r, nil
}

func (r *Registry) validate() error {
	if r.Schema != 1 {
		return fmt.Errorf("schema = %d: this pantty reads schema 1", r.Schema)
	}
	if len(r.Harness) == 0 {
		return fmt.Errorf("no [[harness]] entries")
	}
	seen := map[string]bool{}
	for i, e := range r.Harness {
		where := fmt.Sprintf("[[harness]] #%d (%s %s)", i+1, e.Name, e.Versions)
		switch {
		case e.Name == "":
			return fmt.Errorf("%s: name is missing", where)
		case !versionsRE().MatchString(e.Versions):
			return fmt.Errorf("%s: versions = %q: want \"*\", an exact version or a range like \"2.1.x\"", where, e.Versions)
		case e.Path == "":
			return fmt.Errorf("%s: path is missing (the submission path the rows were established on)", where)
		case len(e.Sources) == 0:
			return fmt.Errorf("%s: sources are missing", where)
		case seen[e.Name+" "+e.Versions]:
			return fmt.Errorf("%s: listed twice", where)
		}
		seen[e.Name+" "+e.Versions] = true
		if err := e.Dates.check(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		for _, op := range e.rows() {
			if err := op.row.check(); err != nil {
				return fmt.Errorf("%s: [harness.%s]: %w", where, op.name, err)
			}
		}
		d := e.Dispatch
		if d.Status == Met && (d.Form == "" || d.Artifacts == "") {
			return fmt.Errorf("%s: [harness.dispatch]: a met dispatch row needs form and artifacts", where)
		}
	}
	return nil
}

func (d Dates) check() error {
	switch {
	case d.AsOf.IsZero() || d.Revisit.IsZero() || d.FailAfter.IsZero():
		return fmt.Errorf("as_of, revisit and fail_after are all required")
	case d.Revisit.Before(d.AsOf):
		return fmt.Errorf("revisit %s is before as_of %s", day(d.Revisit), day(d.AsOf))
	case d.FailAfter.Before(d.Revisit):
		return fmt.Errorf("fail_after %s is before revisit %s", day(d.FailAfter), day(d.Revisit))
	}
	return nil
}

func (r Row) check() error {
	switch r.Status {
	case Met, Unmet, Unmeasured:
	case "":
		return fmt.Errorf("missing, or status is missing")
	default:
		return fmt.Errorf("status = %q: want met, unmet or unmeasured", r.Status)
	}
	if r.How == "" {
		return fmt.Errorf("how is missing (say what is known)")
	}
	if r.Status == Met && len(r.Sources) == 0 {
		return fmt.Errorf("a met row needs its sources")
	}
	n := 0
	for _, t := range []*time.Time{r.AsOf, r.Revisit, r.FailAfter} {
		if t != nil {
			n++
		}
	}
	switch n {
	case 0:
	case 3:
		return Dates{*r.AsOf, *r.Revisit, *r.FailAfter}.check()
	default:
		return fmt.Errorf("give all three of as_of, revisit and fail_after, or none")
	}
	return nil
}

// opRow names one row of an entry.
type opRow struct {
	name string
	row  Row
}

func (e Entry) rows() []opRow {
	return []opRow{{"submit", e.Submit}, {"cancel", e.Cancel}, {"context", e.Context},
		{"compaction", e.Compaction}, {"liveness", e.Liveness}, {"resume", e.Resume}, {"dispatch", e.Dispatch.Row}}
}

func (e Entry) row(name string) Row {
	for _, r := range e.rows() {
		if r.name == name {
			return r.row
		}
	}
	panic("gates: no row " + name)
}

// datesOf returns a row's own dates, or the entry's.
func (e Entry) datesOf(r Row) Dates {
	if r.AsOf != nil {
		return Dates{*r.AsOf, *r.Revisit, *r.FailAfter}
	}
	return e.Dates
}

var versionsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\*|[0-9]+(\.[0-9]+)*(\.x)?)$`) })

// Covers reports whether the entry's version range covers version.
func (e Entry) Covers(version string) bool {
	if e.Versions == "*" {
		return true
	}
	if version == "" {
		return false
	}
	want := strings.Split(e.Versions, ".")
	got := strings.Split(version, ".")
	if want[len(want)-1] == "x" {
		want = want[:len(want)-1]
		return len(got) > len(want) && equal(got[:len(want)], want)
	}
	return equal(got, want)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Harnesses lists the harness names in registry order, each once.
func (r *Registry) Harnesses() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range r.Harness {
		if !seen[e.Name] {
			seen[e.Name] = true
			out = append(out, e.Name)
		}
	}
	return out
}

// find returns the entry for harness and version, and a note when the version
// was not observed. Entries of one harness are listed newest first, so an
// unobserved version is judged by the newest range, and the note says so.
func (r *Registry) find(harness, version string) (*Entry, string) {
	var first *Entry
	for i := range r.Harness {
		e := &r.Harness[i]
		if e.Name != harness {
			continue
		}
		if first == nil {
			first = e
		}
		if version != "" && e.Covers(version) {
			return e, ""
		}
	}
	if version == "" && first != nil {
		return first, fmt.Sprintf("version not observed: judged by the registry's newest range for %s, %s", harness, first.Versions)
	}
	return nil, ""
}

var versionInBuild = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9]+(\.[0-9]+)+`) })

// VersionOf extracts a version number from a harness's own version string
// ("2.1.328 (Claude Code)" → "2.1.328", "pantty sim (sim-0.1)" → "0.1"); "" if none.
func VersionOf(build string) string { return versionInBuild().FindString(build) }

func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// EntryFor returns the registry entry whose range covers harness at version.
func (r *Registry) EntryFor(harness, version string) (Entry, bool) {
	for _, e := range r.Harness {
		if e.Name == harness && e.Covers(version) {
			return e, true
		}
	}
	return Entry{}, false
}

// RowStatus is the status (met, unmet, unmeasured) the entry records for an
// operation row; "" for a name that is no row.
func (e Entry) RowStatus(name string) string {
	for _, r := range e.rows() {
		if r.name == name {
			return r.row.Status
		}
	}
	return ""
}
