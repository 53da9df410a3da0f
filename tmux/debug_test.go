package tmux_test

import (
	"os"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestDebugHook(t *testing.T) {
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	for i := 0; i < 30; i++ {
		name := "h" + string(rune('a'+i))
		p := newSession(t, c, tmux.NewSessionOpts{Name: name, Argv: []string{"sh", "-c", "read x; exit 3"}})
		c.SetOption(ctx, p.ID, "remain-on-exit", "on")
		c.SetHook(ctx, name, "pane-died", "run-shell -b "+tmux.ShellQuote("echo #{hook_pane} >> /tmp/exp/dbg"))
		c.SendKeys(ctx, p.ID, "Enter")
		time.Sleep(300 * time.Millisecond)
		got, _ := findPane(t, c, p.ID)
		if got.DeadStatus == -1 {
			st, _ := os.ReadFile("/proc/" + itoa2(got.PID) + "/stat")
			t.Logf("bad: %+v stat=%s", got, st)
			time.Sleep(2 * time.Second)
			got, _ = findPane(t, c, p.ID)
			t.Logf("later: %+v", got)
		}
	}
}

func itoa2(n int) string { return fmtI(n) }
func fmtI(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}
