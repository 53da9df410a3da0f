package tmux_test

import (
	"fmt"
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
		if got, _ := findPane(t, c, p.ID); got.DeadStatus != 3 {
			t.Logf("transient: %+v", got)
		}
	}
	time.Sleep(2 * time.Second)
	ps, _ := c.ListPanes(ctx)
	for _, p := range ps {
		if p.DeadStatus != 3 {
			t.Logf("bad: %+v", p)
		}
	}
}
