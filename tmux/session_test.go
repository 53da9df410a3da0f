package tmux_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestNewSessionListPanes(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "seat-1", Argv: []string{"sleep", "60"}, Width: 100, Height: 30})
	if p.ID == "" || p.PID <= 0 || p.Dead || p.Session != "seat-1" {
		t.Fatalf("NewSession returned %+v", p)
	}
	if !alive(p.PID) {
		t.Fatalf("pane pid %d is not a live process", p.PID)
	}
	panes, err := c.ListPanes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(panes) != 1 {
		t.Fatalf("ListPanes = %+v, want one pane", panes)
	}
	got := runningCommand(t, c, panes[0].ID, "sleep")
	if got.ID != p.ID || got.PID != p.PID || got.Command != "sleep" || got.Session != "seat-1" ||
		got.Dead || got.DeadStatus != -1 || got.SessionAttached != 0 {
		t.Fatalf("ListPanes pane = %+v, want id %s pid %d command sleep, alive, unattached", got, p.ID, p.PID)
	}
	if size := strings.TrimSpace(rawTmux(t, c, "display-message", "-p", "-t", p.ID, "#{pane_width}x#{pane_height}")); size != "100x30" {
		t.Errorf("pane size %s, want 100x30", size)
	}
	ok, err := c.HasSession(ctx, "seat-1")
	if !ok || err != nil {
		t.Errorf("HasSession(seat-1) = %v, %v", ok, err)
	}
}

// TestArgvIsNotInterpreted proves that argv words reach the program
// exactly, whether there is one word (which tmux would hand to a shell) or
// many (including words tmux's own parser treats specially), and that the
// start directory and environment are not format-expanded.
func TestArgvIsNotInterpreted(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	dir := tmuxtest.Dir(t)
	out := filepath.Join(dir, "out")
	dump := writeScript(t, dir, "dump", `o=$1; shift
{ for a in "$@"; do printf '[%s]\n' "$a"; done; pwd; printf 'FOO=[%s]\n' "$FOO"; echo "PID=$$"; } > "$o.tmp"
mv "$o.tmp" "$o"
exec sleep 60
`)
	words := []string{";", "a;", `a\;`, `\`, "{", "}", "-x", "", "~", "$HOME", "#{pane_id}", "'", "a b", "*"}
	start := filepath.Join(dir, "d#{session_name}##x")
	if err := os.Mkdir(start, 0o755); err != nil {
		t.Fatal(err)
	}
	p := newSession(t, c, tmux.NewSessionOpts{
		Name: "argv", Dir: start, Env: []string{"FOO=#{pane_id} x;"},
		Argv: append([]string{dump, out}, words...),
	})
	var want strings.Builder
	for _, w := range words {
		want.WriteString("[" + w + "]\n")
	}
	want.WriteString(start + "\nFOO=[#{pane_id} x;]\nPID=" + strconv.Itoa(p.PID) + "\n")
	if got := string(waitFile(t, out)); got != want.String() {
		t.Errorf("program saw\n%s\nwant\n%s", got, want.String())
	}

	// One word: a path with a space and a '$' must not be split or
	// expanded, and the program must replace the shell (same pid).
	odd := writeScript(t, dir, "odd $name x", `printf '%s PID=%s' "$0" "$$" > "${0%/*}/one.tmp"; mv "${0%/*}/one.tmp" "${0%/*}/one"; exec sleep 60`)
	p1 := newSession(t, c, tmux.NewSessionOpts{Name: "one", Argv: []string{odd}})
	if got, want := string(waitFile(t, filepath.Join(dir, "one"))), odd+" PID="+strconv.Itoa(p1.PID); got != want {
		t.Errorf("single-word program saw %q, want %q", got, want)
	}
}

func TestRemainOnExitAndRespawn(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "quick", Argv: []string{"sh", "-c", "exit 7"}, RemainOnExit: true})
	dead := waitDead(t, c, p.ID)
	if dead.DeadStatus != 7 || dead.DeadSignal != 0 || dead.Session != "quick" {
		t.Fatalf("dead pane = %+v, want DeadStatus 7", dead)
	}

	np, err := c.RespawnPane(ctx, p.ID, []string{"sleep", "60"}, tmuxtest.Dir(t))
	if err != nil {
		t.Fatal(err)
	}
	if np.ID != p.ID || np.PID == p.PID || np.PID <= 0 || np.Dead || !alive(np.PID) {
		t.Fatalf("RespawnPane = %+v (old pid %d), want same id, new live pid", np, p.PID)
	}
	got := runningCommand(t, c, p.ID, "sleep")
	if got.Dead || got.PID != np.PID || got.Command != "sleep" {
		t.Fatalf("after respawn ListPanes = %+v", got)
	}

	// Killed by a signal: status unknown, signal reported.
	ps := newSession(t, c, tmux.NewSessionOpts{Name: "sig", Argv: []string{"sh", "-c", "kill -9 $$"}, RemainOnExit: true})
	dead = waitDead(t, c, ps.ID)
	if dead.DeadStatus != -1 || dead.DeadSignal != 9 {
		t.Fatalf("signalled pane = %+v, want DeadStatus -1 DeadSignal 9", dead)
	}

	// Control: without RemainOnExit the session simply vanishes.
	newSession(t, c, tmux.NewSessionOpts{Name: "gone", Argv: []string{"true"}})
	waitFor(t, 5*time.Second, "session without remain-on-exit to vanish", func() (bool, error) {
		ok, err := c.HasSession(ctx, "gone")
		return !ok && err == nil, err
	})
}

// TestExactTargets checks that calls for session "a" never reach "ab".
func TestExactTargets(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	newSession(t, c, tmux.NewSessionOpts{Name: "ab", Argv: []string{"sleep", "60"}})
	if ok, err := c.HasSession(ctx, "a"); ok || err != nil {
		t.Fatalf("HasSession(a) = %v, %v with only ab present", ok, err)
	}
	mustKind(t, c.KillSession(ctx, "a"), tmux.ErrNoTarget, "KillSession(a)")
	mustKind(t, c.SetHook(ctx, "a", "pane-died", "display-message x"), tmux.ErrNoTarget, "SetHook(a)")
	mustKind(t, c.SetOption(ctx, "=a:", "remain-on-exit", "on"), tmux.ErrNoTarget, "SetOption(=a:)")
	if ok, err := c.HasSession(ctx, "ab"); !ok || err != nil {
		t.Fatalf("ab was hit by calls for a: HasSession(ab) = %v, %v", ok, err)
	}
	newSession(t, c, tmux.NewSessionOpts{Name: "a", Argv: []string{"sleep", "60"}})
	if err := c.KillSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.HasSession(ctx, "ab"); !ok {
		t.Fatal("KillSession(a) killed ab")
	}
}

func TestSetOptionAndHook(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	dir := tmuxtest.Dir(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "hooked", Argv: []string{"sh", "-c", "read x; exit 3"}})
	if err := c.SetOption(ctx, "=hooked", "@seat", "value with spaces;"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(rawTmux(t, c, "show-options", "-v", "-t", "=hooked:", "@seat")); got != "value with spaces;" {
		t.Errorf("@seat = %q", got)
	}
	if err := c.SetOption(ctx, p.ID, "remain-on-exit", "on"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetOption(ctx, "", "@global", "g"); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(dir, "died")
	shell := "echo #{hook_pane} > " + tmux.ShellQuote(mark+".tmp") + " && mv " + tmux.ShellQuote(mark+".tmp") + " " + tmux.ShellQuote(mark)
	if err := c.SetHook(ctx, "hooked", "pane-died", "run-shell -b "+tmux.ShellQuote(shell)); err != nil {
		t.Fatal(err)
	}
	if err := c.SendKeys(ctx, p.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	// pane-died only fires once tmux has the exit status; waitDead makes
	// sure it gets it even if its SIGCHLD was lost.
	if got := waitDead(t, c, p.ID); got.DeadStatus != 3 {
		t.Errorf("pane after exit = %+v, want dead with status 3", got)
	}
	if got := strings.TrimSpace(string(waitFile(t, mark))); got != p.ID {
		t.Errorf("pane-died hook saw #{hook_pane} = %q, want %s", got, p.ID)
	}
	// A command tmux cannot parse is reported when the hook is set.
	if err := c.SetHook(ctx, "hooked", "pane-died", "nosuchcommand x"); err == nil {
		t.Error("SetHook accepted an unknown command")
	}
}

// TestReap checks the lost-SIGCHLD workaround: many panes exit at once,
// and every one must end up with its exit status once the server has been
// nudged where needed.
func TestReap(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	mustKind(t, c.Reap(ctx), tmux.ErrNoServer, "Reap without server")
	var ids []string
	for i := 0; i < 12; i++ {
		p := newSession(t, c, tmux.NewSessionOpts{Name: "r" + strconv.Itoa(i),
			Argv: []string{"sh", "-c", "exit " + strconv.Itoa(i)}, RemainOnExit: true})
		ids = append(ids, p.ID)
	}
	for i, id := range ids {
		if got := waitDead(t, c, id); got.DeadStatus != i {
			t.Errorf("pane %s: %+v, want status %d", id, got, i)
		}
	}
	pid, err := c.ServerPID(ctx)
	if err != nil || !alive(pid) {
		t.Fatalf("ServerPID = %d, %v", pid, err)
	}
	if err := c.Reap(ctx); err != nil {
		t.Fatalf("Reap on a healthy server: %v", err)
	}
	if ok, err := c.HasSession(ctx, "r0"); !ok || err != nil {
		t.Fatalf("server unwell after Reap: %v %v", ok, err)
	}
}

// runningCommand returns pane id once pane_current_command names cmd: the
// forked child is "tmux" until it execs cmd (seen under the full suite's
// load, in two tests), and exec announces nothing, so the pane is looked at
// again for a bounded time; the caller checks what it got.
func runningCommand(t *testing.T, c *tmux.Client, id, cmd string) tmux.Pane {
	t.Helper()
	got, _ := findPane(t, c, id)
	for deadline := time.Now().Add(5 * time.Second); got.Command != cmd && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		got, _ = findPane(t, c, id)
	}
	return got
}
