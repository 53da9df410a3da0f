package driver

import (
	"testing"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// bareAdapter has only the required methods and zero Capabilities: every
// optional ability absent.
type bareAdapter struct{}

func (bareAdapter) Name() string                                                  { return "bare" }
func (bareAdapter) Argv(harness.Launch) ([]string, error)                         { return []string{"true"}, nil }
func (bareAdapter) Env(state.Seat, config.Config) map[string]string               { return nil }
func (bareAdapter) SessionExists(state.Seat, config.Config, string) (bool, error) { return false, nil }
func (bareAdapter) FindTurn(state.Seat, config.Config, string, string, string) (bool, string, error) {
	return false, "", nil
}
func (bareAdapter) Busy(string) bool             { return false }
func (bareAdapter) Commands() []string           { return []string{"compact"} }
func (bareAdapter) Facts() guard.DispatchFacts   { return guard.DefaultDispatchFacts }
func (bareAdapter) PasteSettle() config.Duration { return config.Duration{} }
func (bareAdapter) Caps() harness.Capabilities   { return harness.Capabilities{} }

// TestZeroCapabilitiesMeanCannot: the driver treats a zero Capabilities field
// as "this harness cannot" (the harness package's own readers are checked in harness/caps_test.go).
func TestZeroCapabilitiesMeanCannot(t *testing.T) {
	t.Parallel()
	d := &Driver{Ad: bareAdapter{}}
	if d.selfNaming() {
		t.Error("no NamesOwnSession: the driver must choose the session id")
	}
	if _, lazy := d.lazyStart(); lazy {
		t.Error("no StartsLazily: the start is SessionStart")
	}
}
