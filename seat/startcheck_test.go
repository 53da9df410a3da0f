package seat_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
)

// hint is the command a refusal tells a person to paste: the quoted text
// after "run ".
func hint(t *testing.T, text string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "run '")
	command, _, closed := strings.Cut(after, "'")
	if !ok || !closed {
		t.Fatalf("no command to run in %q", text)
	}
	return command
}

// paste runs a hint the way a person pastes it into a shell: sh -c, the
// pantty under test found as `pantty` on PATH, with extra exported.
func paste(t *testing.T, h *seattest.Harness, command string, extra map[string]string) seattest.Result {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(h.Env(), "PATH="+filepath.Dir(h.Bin)+":"+os.Getenv("PATH"))
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("paste %q: %v", command, err)
		}
		code = ee.ExitCode()
	}
	return seattest.Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// nothingStarted fails unless a refused start left the seat as it was: no
// driver, no tmux server, no launch record, no intent to run.
func nothingStarted(t *testing.T, h *seattest.Harness) {
	t.Helper()
	s := h.Seat()
	if _, live, _ := s.LiveOwner(); live {
		t.Fatal("a refused start left a live driver")
	}
	if h.ServerRunning() {
		t.Fatal("a refused start started the seat's tmux server")
	}
	for _, p := range []string{s.LaunchEnvPath(), s.IntentPath()} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a refused start wrote %s (%v)", p, err)
		}
	}
}

// TestStartRefusesAMissingPassEnvVariable: a pass_env variable that is not
// exported (nor recorded, nor in env_file or env) fails `seat start` with
// exit 2, changes nothing, and names the variable and the command; pasted with
// the variable exported, that command starts the seat and the harness sees it.
func TestStartRefusesAMissingPassEnvVariable(t *testing.T) {
	t.Parallel()
	const key = "STARTCHECK_KEY"
	h := seattest.New(t, "nokey", seattest.TOML(fmt.Sprintf("pass_env = [%q]", key)))
	r := h.Run("seat", "start", h.Name)
	if r.Code != 2 || !strings.Contains(r.Stderr, key) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("start without %s: want exit 2 and one line naming it, got %s", key, r)
	}
	t.Logf("refused: %s", r.Stderr)
	nothingStarted(t, h)
	command := hint(t, r.Stderr)
	if command != "pantty seat start "+h.Name {
		t.Fatalf("hint %q: want the start command", command)
	}
	if p := paste(t, h, command, map[string]string{key: "k-123"}); p.Code != 0 {
		t.Fatalf("pasted %q with %s exported: %s\ndriver.log:\n%s", command, key, p, h.DriverLog())
	}
	lf, err := h.Seat().LaunchFile().Read()
	if err != nil || lf.Env[key] != "k-123" {
		t.Fatalf("launch.toml after the pasted start: %v, %s=%q", err, key, lf.Env[key])
	}
}

// TestRecoverDoesNotRestartASeatMissingPassEnv: a seat whose recorded
// environment lacks a pass_env variable (seat.toml gained it after the start)
// is not restarted by `pantty recover`: no driver is started (no loop of
// launches that cannot work), and the verdict names the variable and the
// command; pasted with the variable exported, that command revives it.
func TestRecoverDoesNotRestartASeatMissingPassEnv(t *testing.T) {
	t.Parallel()
	const key = "RECOVERCHECK_KEY"
	h := seattest.New(t, "rnokey")
	h.Start()
	if err := syscall.Kill(h.Owner().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proc.EndLaunch(h.Seat(), 0)
	s := h.Seat()
	h.WaitFor("the driver's lock to be free", 30*time.Second, func() bool { _, live, _ := s.LiveOwner(); return !live })
	cfg, err := os.ReadFile(filepath.Join(s.Dir, "seat.toml"))
	if err != nil {
		t.Fatal(err)
	}
	h.WriteConfig(fmt.Sprintf("pass_env = [%q]\n", key) + string(cfg))
	r := h.Run("recover", "--json")
	var rep seattest.SweepReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("recover --json: %v: %s", err, r)
	}
	var row seattest.SweptSeat
	for _, x := range rep.Seats {
		if x.Seat == h.Name {
			row = x
		}
	}
	if !strings.Contains(row.Result, "not restarted") || !strings.Contains(row.Result, key) {
		t.Fatalf("recover's verdict: want not restarted naming %s, got %+v", key, row)
	}
	if _, live, _ := s.LiveOwner(); live {
		t.Fatal("recover started a driver for a seat that cannot work")
	}
	t.Logf("recover: %s", row.Result)
	command := hint(t, row.Result)
	if p := paste(t, h, command, map[string]string{key: "k-456"}); p.Code != 0 {
		t.Fatalf("pasted %q with %s exported: %s", command, key, p)
	}
}

// fakeClaude is a claude-code seat's command for tests that never reach a
// model: it answers the start gates' --version as Claude Code 2.1.328 and
// otherwise runs the simulator (which speaks Claude Code's settings, hooks
// and session flags).
const fakeClaude = `#!/bin/sh
[ "$1" = --version ] && { echo "2.1.328 (Claude Code)"; exit 0; }
exec "$PANTTY_BIN" sim "$@"
`

// TestStartRefusesAClaudeHomePrepareHomeWouldChange: a Claude Code seat
// whose HOME lacks the first-run answers is refused at start (exit 2, nothing
// started), naming what is missing and `pantty seat prepare-home NAME`;
// pasted, that command prepares the home, and the next start is no longer
// refused for it.
func TestStartRefusesAClaudeHomePrepareHomeWouldChange(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "claude-home")
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(fakeClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	h := seattest.NewHarness(t, "cc", "claude-code",
		seattest.Env(map[string]string{"HOME": home, "PANTTY_BIN": seattest.Binary(t)}),
		seattest.TOML(fmt.Sprintf("command = %q", bin), `ready_timeout = "5s"`))
	r := h.Run("seat", "start", h.Name)
	if r.Code != 2 || !strings.Contains(r.Stderr, "hasCompletedOnboarding") || !strings.Contains(r.Stderr, "is not trusted") {
		t.Fatalf("start into an unprepared home: want exit 2 naming what is missing, got %s", r)
	}
	t.Logf("refused: %s", r.Stderr)
	nothingStarted(t, h)
	command := hint(t, r.Stderr)
	if command != "pantty seat prepare-home "+h.Name {
		t.Fatalf("hint %q: want the prepare-home command", command)
	}
	if p := paste(t, h, command, nil); p.Code != 0 {
		t.Fatalf("pasted %q: %s", command, p)
	}
	r = h.Run("seat", "start", h.Name)
	if r.Code == 2 || strings.Contains(r.Stderr, "prepare-home") {
		t.Fatalf("start after prepare-home: still refused: %s", r)
	}
	t.Logf("start after prepare-home: %s", r)
	h.Run("seat", "stop", h.Name)
}
