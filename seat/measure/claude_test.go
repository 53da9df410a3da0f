package measure_test

import (
	"github.com/pantty/pantty/internal/guard"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/claudecode"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// On the real claude binary (against the loopback stand-in), the measurement
// records '/' and '!' as dispatching on the first character, with the raw
// /clear control really dispatching.
func TestMeasureDispatchOnRealClaudeCode(t *testing.T) {
	t.Parallel()
	bin, err := claudecode.CachedBinary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI must install Claude Code %s: scripts/test.sh)", err, claudecode.Version)
		}
		t.Skipf("%v; run scripts/test.sh to install Claude Code %s", err, claudecode.Version)
	}
	if testing.Short() {
		t.Skip("the real-claude measurement takes ~35 s; not in -short")
	}
	home := tmuxtest.Dir(t)
	target, err := claudecode.Adapter{}.Measure(seat.MeasureSpec{Bin: bin, Dir: tmuxtest.Dir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	f, err := measure.Run(home, target, measure.Options{Pantty: seattest.Binary(t), Revisit: 30 * 24 * time.Hour, Fail: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	if !f.ControlOK || f.Form != guard.FormFirstChar || !strings.Contains(f.Sigils, "/") || !strings.Contains(f.Sigils, "!") {
		t.Fatalf("claude-code facts: form %q sigils %q control %v", f.Form, f.Sigils, f.ControlOK)
	}
	if !strings.Contains(f.Build, claudecode.Version) {
		t.Errorf("build %q does not name the measured version %s", f.Build, claudecode.Version)
	}
	for _, o := range f.Observations {
		if o.Door == "board" && (o.Dispatched || o.SideEffect) {
			t.Errorf("board door dispatched %q", o.Input)
		}
	}
}
