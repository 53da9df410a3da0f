package gemini_test

import (
	"path/filepath"
	"testing"

	"github.com/pantty/pantty/harness/gemini/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// cronSeat is a Gemini CLI seat set up as docs/real-seats.md tells a person
// to: `command = "gemini"` on a PATH entry only the person's shell has, the
// key and the endpoint passed by pass_env (seattest.E2E's revival under
// cron). The CLI is a node script: node must be on that PATH too (here it is
// in /usr/bin, which cron's PATH has).
func cronSeat(t *testing.T, name string, toml ...string) (*seattest.E2ERig, seattest.CronSeat) {
	bin := geminiBinary(t)
	api, err := standin.Start(standin.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	link := seattest.CronBinDir(t, tmuxtest.Dir(t), "gemini", bin)
	// ready_timeout: Gemini CLI 0.61.0 took ~2 s from launch to SessionStart
	// alone, 20 s under the full suite, and once more than 30 s (a CI run
	// with other work beside it, 2026-12-04: its input box drawn, the hook not
	// yet run). The test is about revival under cron, not start-up speed.
	h := seattest.NewHarness(t, name, "gemini-cli", seattest.TOML(seattest.WithCommand("gemini", append([]string{
		`heartbeat_interval = "1s"`, `ready_timeout = "90s"`, `pass_env = ["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"]`}, toml...)...)...))
	shell := map[string]string{"PATH": filepath.Dir(link) + ":" + seattest.CronPath,
		"GEMINI_API_KEY": "standin-key", "GOOGLE_GEMINI_BASE_URL": api.URL()}
	return rigOf(h, api).E2ERig, seattest.CronSeat{Shell: shell, Binary: link}
}
