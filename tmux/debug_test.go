package tmux_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestDebugHook(t *testing.T) {
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	for i := 0; i < 25; i++ {
		name := fmt.Sprintf("h%d", i)
		p := newSession(t, c, tmux.NewSessionOpts{Name: name, Argv: []string{"sh", "-c", "read x; exit 3"}})
		c.SetOption(ctx, p.ID, "remain-on-exit", "on")
		c.SendKeys(ctx, p.ID, "Enter")
		time.Sleep(300 * time.Millisecond)
		got, _ := findPane(t, c, p.ID)
		if got.DeadStatus == -1 {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", got.PID))
			t.Logf("bad: %+v stat=%.40s", got, st)
			time.Sleep(2 * time.Second)
			got, _ = findPane(t, c, p.ID)
			st, _ = os.ReadFile(fmt.Sprintf("/proc/%d/stat", got.PID))
			t.Logf("later: %+v stat=%.40s", got, st)
		}
	}
}
