package seat

import (
	"fmt"
	"path/filepath"
	"time"
)

// ContractRows are the operations `pantty measure contract` measures, named
// as the gates registry names its rows.
var ContractRows = []string{"submit", "cancel", "context", "compaction", "liveness", "resume"}

// Contract is facts/<harness>/<version>/contract.toml: the five-operation
// contract (and resume) measured on pantty's own path against one installed
// harness version, each row with the artifact it rests on. The gates judge
// that version by these rows before the shipped registry's.
type Contract struct {
	Harness   string        `toml:"harness"`
	Version   string        `toml:"version"` // the version number judged (from Build)
	Build     string        `toml:"build"`   // what the harness said for --version
	Tmux      string        `toml:"tmux"`
	Pantty    string        `toml:"pantty"`
	Path      string        `toml:"path"`     // transport and driver
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

// Row returns the named row, ok=false when the run did not measure it.
func (c Contract) Row(name string) (ContractRow, bool) {
	for _, r := range c.Rows {
		if r.Name == name {
			return r, true
		}
	}
	return ContractRow{}, false
}

// ContractPath is where the contract measured for harness at version lives.
func ContractPath(home, harness, version string) string {
	return filepath.Join(home, "facts", harness, version, "contract.toml")
}

// LoadContract reads a measured contract; missing wraps fs.ErrNotExist.
func LoadContract(home, harness, version string) (Contract, error) {
	if version == "" {
		return Contract{}, fmt.Errorf("no version to look up a measured contract for %s", harness)
	}
	return ContractFile(home, harness, version).Read()
}
