package codex_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/codex"
	"github.com/pantty/pantty/seat/codex/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestRevivalUnderCronKeepsTheSeatWorking is the Codex form of the Claude
// test of the same name: `command = "codex"` on a PATH entry only the
// person's shell has, the provider key passed by pass_env, driver and codex
// killed, `pantty recover` run with cron's bare environment. The revival is
// verified on the same thread and the next message reaches the stand-in
// exactly once.
func TestRevivalUnderCronKeepsTheSeatWorking(t *testing.T) {
	t.Parallel()
	bin := codexBinary(t)
	dir := tmuxtest.Dir(t)
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "requests.jsonl"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(binDir, "codex")); err != nil {
		t.Fatal(err)
	}
	h := seattest.NewHarness(t, "cron", "codex", seattest.TOML(`command = "codex"`, `permission_mode = "danger-full-access"`,
		`heartbeat_interval = "1s"`, `ready_timeout = "20s"`, `pass_env = ["STANDIN_API_KEY"]`))
	cfg, err := h.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if err := codex.WriteProvider(codex.Home(h.Seat(), cfg), "standin", api.URL()+"/v1", "STANDIN_API_KEY", model); err != nil {
		t.Fatal(err)
	}
	r := rigOf(h, api)
	shell := map[string]string{"PATH": binDir + ":" + seattest.CronPath, "STANDIN_API_KEY": "standin-key"}
	if res := r.RunEnv(shell, "", "seat", "start", r.Name); res.Code != 0 {
		t.Fatalf("seat start: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	r.Send("before", "first task")
	r.Processed("before")
	thread := r.Session().ID

	o, sess := r.Owner(), r.Session()
	syscall.Kill(o.PID, syscall.SIGKILL)
	seat.KillGroup(sess.PanePID)
	r.WaitFor("driver and codex gone", 20*time.Second, func() bool {
		_, err := seat.ProcStart(sess.PanePID)
		return !seat.ProcAlive(o.PID, o.PIDStart) && err != nil
	})
	if !r.Seat().WaitFree(20 * time.Second) {
		t.Fatal("owner.lock still held after the driver died")
	}

	res := r.RunBare("recover", "--json")
	var rep recover.Report
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatalf("recover --json under cron's environment: %v: %s", err, res)
	}
	var sr recover.SeatReport
	for _, s := range rep.Seats {
		if s.Seat == r.Name {
			sr = s
		}
	}
	if sr.Verdict != recover.Dead || !strings.HasPrefix(sr.Result, "verified") {
		t.Fatalf("recover under cron's environment: want dead → verified, got %+v\n%s\ndriver.log:\n%s", sr, res, r.DriverLog())
	}
	if got := r.Session().ID; got != thread {
		t.Fatalf("revived on thread %s, want %s", got, thread)
	}
	r.Send("after", "second task")
	r.Processed("after")
	if st := r.Status("after"); st.State != seat.StateProcessed {
		t.Fatalf("message after the revival: %+v", st)
	}
	if turns := r.Turns(); turns["before"] != 1 || turns["after"] != 1 {
		t.Fatalf("model turns per message at the stand-in: %v, want before=1 after=1", turns)
	}
}
