package tmux_test

import (
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestDebugHook(t *testing.T) {
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "hooked", Argv: []string{"sh", "-c", "read x; exit 3"}})
	t.Log(c.SetOption(ctx, p.ID, "remain-on-exit", "on"))
	mark := "/tmp/exp/dbg"; t.Log(c.SetHook(ctx, "hooked", "pane-died", "run-shell -b "+tmux.ShellQuote("echo #{hook_pane} > "+tmux.ShellQuote(mark+".tmp")+" && mv "+tmux.ShellQuote(mark+".tmp")+" "+tmux.ShellQuote(mark))))
	t.Log(rawTmux(t, c, "show-hooks", "-t", "=hooked:", "pane-died"))
	t.Log(rawTmux(t, c, "show-options", "-w", "-t", p.ID))
	t.Log(c.SendKeys(ctx, p.ID, "Enter"))
	time.Sleep(500 * time.Millisecond)
	t.Log(c.ListPanes(ctx))
}
