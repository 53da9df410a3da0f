package claudecode_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/claudecode/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// cronRig is a real-claude seat configured the way docs/claude-code.md tells a
// user to: `command = "claude"` found on the person's PATH (a directory cron's
// PATH lacks), and the key and base URL passed from the person's shell by
// pass_env — nothing of them in seat.toml.
type cronRig struct {
	*rig
	shell map[string]string // the starting shell's variables
}

func newCronRig(t *testing.T, name string, extra ...string) *cronRig {
	t.Helper()
	bin := claudeBinary(t)
	dir := tmuxtest.Dir(t)
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "requests.jsonl"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	binDir := filepath.Dir(seattest.CronBinDir(t, dir, "claude", bin))
	home := filepath.Join(dir, "home-claude")
	h := seattest.NewHarness(t, name, "claude-code", seattest.TOML(seattest.WithCommand("claude", append([]string{`heartbeat_interval = "1s"`,
		`ready_timeout = "20s"`, `pass_env = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_RETRIES"]`}, extra...)...)...))
	if err := claudecode.PrepareHome(home, apiKey, h.Work); err != nil {
		t.Fatal(err)
	}
	shell := map[string]string{
		"HOME":                    home,
		"PATH":                    binDir + ":" + seattest.CronPath,
		"ANTHROPIC_BASE_URL":      api.URL(),
		"ANTHROPIC_API_KEY":       apiKey,
		"CLAUDE_CODE_MAX_RETRIES": "0",
	}
	return &cronRig{rig: rigOf(h, api), shell: shell}
}

// cronSeat is the cron rig as seattest.E2E's revival under cron takes it.
func cronSeat(t *testing.T, name string, toml ...string) (*seattest.E2ERig, seattest.CronSeat) {
	r := newCronRig(t, name, toml...)
	return r.E2ERig, seattest.CronSeat{Shell: r.shell, Binary: filepath.Join(strings.Split(r.shell["PATH"], ":")[0], "claude")}
}
