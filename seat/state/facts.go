package state

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/statedir"
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

// ContractRows are the operations `pantty measure contract` measures, named
// as the gates registry names its rows.
var ContractRows = []string{"submit", "cancel", "context", "compaction", "liveness", "resume"}

// Contract is facts/<harness>/<version>/contract.toml: the five-operation
// contract (and resume) measured on pantty's own path against one installed
// harness version, each row with the artifact it rests on. The gates judge
// that version by these rows before the shipped registry's. A harness with a
// second transport (Codex's app server) has one contract per path: each is
// judged on its own, and transport = "auto" reads the app server's.
type Contract struct {
	Harness string `toml:"harness"`
	Version string `toml:"version"` // the version number judged (from Build)
	Build   string `toml:"build"`   // what the harness said for --version
	// Transport is the seat.toml transport the battery's seat ran on; ""
	// (a file written before there were two) is tmux: On reads it.
	Transport string        `toml:"transport,omitempty"`
	Tmux      string        `toml:"tmux"`
	Pantty    string        `toml:"pantty"`
	Path      string        `toml:"path"`     // transport and driver, in words
	Provider  string        `toml:"provider"` // the model API it ran against: the loopback stand-in, or live
	AsOf      time.Time     `toml:"as_of"`
	Revisit   time.Time     `toml:"revisit"`
	FailAfter time.Time     `toml:"fail_after"`
	Artifacts string        `toml:"artifacts"` // the directory of this run's artifacts
	Rows      []ContractRow `toml:"row"`
}

// ContractRow is one measured operation. A row is only written with its
// artifact: an observation without one is a memory, not a measurement.
type ContractRow struct {
	Name     string `toml:"name"`
	Met      bool   `toml:"met"`
	Value    string `toml:"value"`    // what was measured, in its numbers
	How      string `toml:"how"`      // what was done and what decided the row
	Artifact string `toml:"artifact"` // the file it rests on
}

// On is the transport the contract was measured on (tmux for a file that
// names none).
func (c Contract) On() string {
	if c.Transport == "" {
		return config.TransportTmux
	}
	return c.Transport
}

// Row returns the named row, ok=false when the run did not measure it.
func (c Contract) Row(name string) (ContractRow, bool) {
	for _, r := range c.Rows {
		if r.Name == name {
			return r, true
		}
	}
	return ContractRow{}, false
}

// ContractPath is where the contract measured for harness at version on
// transport lives: contract.toml for the tmux path (the name it had before
// there were two paths, so earlier files still read), contract-<transport>.toml
// beside it for another ("" is tmux).
func ContractPath(home, harness, version, transport string) string {
	name := "contract.toml"
	if transport != "" && transport != config.TransportTmux {
		name = "contract-" + transport + ".toml"
	}
	return filepath.Join(home, "facts", harness, version, name)
}

// LoadContract reads a measured contract; missing wraps fs.ErrNotExist.
func LoadContract(home, harness, version, transport string) (Contract, error) {
	if version == "" {
		return Contract{}, fmt.Errorf("no version to look up a measured contract for %s", harness)
	}
	return ContractFile(home, harness, version, transport).Read()
}

// LocalFactsFile is facts/<harness>-<shape>.toml: dispatch facts measured here.
func LocalFactsFile(home, harness, shape string) statedir.File[FactsFile] {
	return homeBind[FactsFile](home, FactsPath(home, harness, shape))
}

// ContractFile is facts/<harness>/<version>/contract[-<transport>].toml: the
// contract battery as measured here on one harness version and path.
func ContractFile(home, harness, version, transport string) statedir.File[Contract] {
	return homeBind[Contract](home, ContractPath(home, harness, version, transport))
}
