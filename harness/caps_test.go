package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// bareAdapter has only the required methods and zero Capabilities: every
// optional ability absent.
type bareAdapter struct{}

func (bareAdapter) Name() string                                                  { return "bare" }
func (bareAdapter) Argv(Launch) ([]string, error)                                 { return []string{"true"}, nil }
func (bareAdapter) Env(state.Seat, config.Config) map[string]string               { return nil }
func (bareAdapter) SessionExists(state.Seat, config.Config, string) (bool, error) { return false, nil }
func (bareAdapter) FindTurn(state.Seat, config.Config, string, string, string) (bool, string, error) {
	return false, "", nil
}
func (bareAdapter) Busy(string) bool             { return false }
func (bareAdapter) Commands() []string           { return []string{"compact"} }
func (bareAdapter) Facts() guard.DispatchFacts   { return guard.DefaultDispatchFacts }
func (bareAdapter) PasteSettle() config.Duration { return config.Duration{} }
func (bareAdapter) Caps() Capabilities           { return Capabilities{} }

// TestZeroCapabilitiesMeanCannot: the places that read Capabilities outside
// the driver loop treat a zero field as "this harness cannot".
func TestZeroCapabilitiesMeanCannot(t *testing.T) {
	t.Parallel()
	var a Adapter = bareAdapter{}
	if _, err := NewCommand(a, "compact", "keep the plan"); err != nil {
		t.Errorf("no bare commands declared: arguments must pass, got %v", err)
	}
	if r := CommandRules(a); len(r.Bare) != 0 || r.Harness != "bare" {
		t.Errorf("command rules %+v", r)
	}
	s := state.Seat{Home: t.TempDir(), Name: "z"}
	s.Dir = s.Home + "/seats/z"
	auth, err := ResolveAuthority(a, s, config.Config{Harness: "bare", Workdir: t.TempDir()}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if auth.Isolation != config.IsolationUnavailable || !strings.Contains(auth.Why, "no OS sandbox") {
		t.Errorf("no ProbeIsolation: want isolation unavailable, got %s (%s)", auth.Isolation, auth.Why)
	}
}
