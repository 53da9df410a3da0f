package state

import (
	"path/filepath"
	"sort"
	"time"

	"github.com/pantty/pantty/internal/statedir"
)

// Block is one provider's entry in $PANTTY_HOME/providers.toml: the provider
// refused a turn, and no seat on it submits before Until. Blocks are per provider
// because quota pools are: every seat on the provider shares the one entry.
type Block struct {
	Until  time.Time `toml:"until"`
	Since  time.Time `toml:"since"`
	Error  string    `toml:"error"`  // the StopFailure error (rate_limit, overloaded, ...)
	Text   string    `toml:"text"`   // the refusal text the reset was read from
	Parsed bool      `toml:"parsed"` // false: no reset time found, Until is the re-probe interval
	Seat   string    `toml:"seat"`   // the seat whose turn was refused
}

// Blocks maps provider names to their blocks (providers.toml, one table per provider).
type Blocks map[string]Block

// Active returns the provider's block if it still holds at now.
func (b Blocks) Active(provider string, now time.Time) (Block, bool) {
	bl, ok := b[provider]
	return bl, ok && now.Before(bl.Until)
}

// ProvidersPath is $PANTTY_HOME/providers.toml.
func ProvidersPath(home string) string { return filepath.Join(home, "providers.toml") }

// HomeTmpDir is where writes to files in the home root put their temp files.
func HomeTmpDir(home string) string { return filepath.Join(home, "tmp") }

// SortedProviders returns the provider names of b in order, for stable output.
func (b Blocks) SortedProviders() []string {
	out := make([]string, 0, len(b))
	for p := range b {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ProvidersFile is providers.toml: the provider waits every seat honours.
func ProvidersFile(home string) statedir.File[Blocks] {
	return homeBind[Blocks](home, ProvidersPath(home))
}
