package seat

import (
	"path/filepath"
	"time"
)

// FactsFile is a dated dispatch measurement ($PANTTY_HOME/facts/<harness>-<path>.toml),
// written by `pantty measure dispatch`. A local measurement takes precedence over
// the facts shipped in the binary; the guard takes its predicate as input.
type FactsFile struct {
	Harness      string        `toml:"harness"`
	Build        string        `toml:"build"`  // the harness's own version string
	Path         string        `toml:"path"`   // the submission path measured (transport and driver)
	Shape        string        `toml:"shape"`  // resident (tmux paste) or turn (-p on stdin)
	Form         string        `toml:"form"`   // the measured predicate form: first-char, none, …
	Sigils       string        `toml:"sigils"` // the leading characters measured to dispatch
	AsOf         time.Time     `toml:"as_of"`
	Revisit      time.Time     `toml:"revisit"`
	FailAfter    time.Time     `toml:"fail_after"`
	ControlOK    bool          `toml:"control_ok"` // the destructive control really dispatched raw
	Artifacts    string        `toml:"artifacts"`  // directory of this run's stored artifacts
	Observations []Observation `toml:"observation"`
}

// Observation is one corpus input as measured, with the artifact that shows it.
type Observation struct {
	Name         string `toml:"name"`
	Input        string `toml:"input"`
	Door         string `toml:"door"` // raw (unguarded control path) or board (the guard)
	Dispatched   bool   `toml:"dispatched"`
	ReachedModel bool   `toml:"reached_model"`
	SideEffect   bool   `toml:"side_effect"`
	Refused      string `toml:"refused,omitempty"` // refused at the door, with the reason
	Artifact     string `toml:"artifact"`
}

// FactsPath names the facts file of one harness and shape.
func FactsPath(home, harness, shape string) string {
	return filepath.Join(home, "facts", harness+"-"+shape+".toml")
}

// LoadFacts reads a local facts file; missing wraps fs.ErrNotExist.
func LoadFacts(home, harness, shape string) (FactsFile, error) {
	return LocalFactsFile(home, harness, shape).Read()
}
