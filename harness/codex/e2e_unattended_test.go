package codex_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// cronSeat is a Codex seat set up as docs/real-seats.md tells a person to:
// `command = "codex"` on a PATH entry only the person's shell has, the
// provider key passed by pass_env (seattest.E2E's revival under cron); toml's
// own permission_mode replaces the seat's danger-full-access.
func cronSeat(t *testing.T, name string, toml ...string) (*seattest.E2ERig, seattest.CronSeat) {
	bin := codexBinary(t)
	dir := tmuxtest.Dir(t)
	api, err := standin.Start(standin.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	link := seattest.CronBinDir(t, dir, "codex", bin)
	lines := []string{`heartbeat_interval = "1s"`, `ready_timeout = "20s"`, `pass_env = ["STANDIN_API_KEY"]`}
	if !slices.ContainsFunc(toml, func(l string) bool { return strings.HasPrefix(l, "permission_mode =") }) {
		lines = append(lines, `permission_mode = "danger-full-access"`)
	}
	h := seattest.NewHarness(t, name, "codex", seattest.TOML(seattest.WithCommand("codex", append(lines, toml...)...)...))
	cfg, err := h.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := codex.WriteProvider(codex.Home(h.Seat(), cfg), "standin", api.URL()+"/v1", "STANDIN_API_KEY", model); err != nil {
		t.Fatal(err)
	}
	shell := map[string]string{"PATH": filepath.Dir(link) + ":" + seattest.CronPath, "STANDIN_API_KEY": "standin-key"}
	return rigOf(h, api).E2ERig, seattest.CronSeat{Shell: shell, Binary: link}
}
