package claudecode_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// The isolation probe decides "auto": with bubblewrap and socat on the
// harness's PATH and namespaces available it reports the sandbox; with a PATH
// that lacks them it names what is missing, auto records "unavailable" and
// isolation = "on" refuses to launch. Isolation "off" never probes.
func TestIsolationProbeDetectsWhatIsMissing(t *testing.T) {
	s, err := state.Open(tmuxtest.Dir(t), "probe")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Authority: config.AuthorityConfig{Isolation: config.IsolationAuto}}
	ad := claudecode.Adapter{}
	if _, err := exec.LookPath("bwrap"); err == nil {
		if _, err := exec.LookPath("socat"); err == nil {
			if mech, err := ad.ProbeIsolation(s, cfg, map[string]string{"PATH": os.Getenv("PATH")}); err != nil {
				t.Errorf("bubblewrap and socat are installed but the probe failed: %v", err)
			} else {
				t.Logf("probe: %s", mech)
			}
		}
	}
	empty := map[string]string{"PATH": tmuxtest.Dir(t)}
	a, err := harness.ResolveAuthority(ad, s, cfg, empty, time.Now())
	if err != nil || a.Isolation != config.IsolationUnavailable || !strings.Contains(a.Why, "bubblewrap") || a.Drop != "" {
		t.Fatalf("auto without bubblewrap: %+v (%v): want unavailable naming bubblewrap, no drop directory", a, err)
	}
	cfg.Authority.Isolation = config.IsolationOn
	if _, err := harness.ResolveAuthority(ad, s, cfg, empty, time.Now()); !errors.Is(err, state.ErrBadInput) {
		t.Fatalf("on without bubblewrap: %v, want a refusal (bad input)", err)
	}
	cfg.Authority.Isolation = config.IsolationOff
	if a, err := harness.ResolveAuthority(ad, s, cfg, empty, time.Now()); err != nil || a.Isolation != config.IsolationOff ||
		len(a.Protected) == 0 || a.Protected[0] != s.Home {
		t.Fatalf("off: %+v (%v): want off, $PANTTY_HOME still protected from the read tools", a, err)
	}
}
