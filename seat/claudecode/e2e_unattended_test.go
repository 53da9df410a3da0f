package claudecode_test

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
	"github.com/pantty/pantty/seat/claudecode"
	"github.com/pantty/pantty/seat/claudecode/standin"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/telemetry"
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
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(binDir, "claude")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home-claude")
	lines := []string{`heartbeat_interval = "1s"`, `ready_timeout = "20s"`,
		`pass_env = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_RETRIES"]`}
	if !strings.HasPrefix(strings.Join(extra, "\n"), "command =") {
		lines = append(lines, `command = "claude"`)
	}
	lines = append(lines, extra...)
	h := seattest.NewHarness(t, name, "claude-code", seattest.TOML(lines...))
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

// startFromShell runs `seat start` from the person's shell.
func (r *cronRig) startFromShell() {
	r.T.Helper()
	if res := r.RunEnv(r.shell, "", "seat", "start", r.Name); res.Code != 0 {
		r.T.Fatalf("seat start: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
}

// killAll kills the driver and the harness, as a crash or an OOM kill would,
// and waits until both are gone.
func (r *cronRig) killAll() {
	r.T.Helper()
	o := r.Owner()
	sess := r.Session()
	syscall.Kill(o.PID, syscall.SIGKILL)
	seat.KillGroup(sess.PanePID)
	r.WaitFor("driver and harness gone", 20*time.Second, func() bool {
		return !seat.ProcAlive(o.PID, o.PIDStart) && !alivePID(sess.PanePID)
	})
	// The flock can outlive the killed driver's pid for a moment (recover then
	// rightly says unknown): wait until it is free.
	if !r.Seat().WaitFree(20 * time.Second) {
		r.T.Fatal("owner.lock still held after the driver died")
	}
}

func alivePID(pid int) bool { _, err := seat.ProcStart(pid); return err == nil }

// bareSweep runs `pantty recover --json` as cron runs it.
func (r *cronRig) bareSweep(args ...string) (recover.Report, seattest.Result) {
	r.T.Helper()
	res := r.RunBare(append([]string{"recover", "--json"}, args...)...)
	var rep recover.Report
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		r.T.Fatalf("recover --json under cron's environment: not a report (%v): %s", err, res)
	}
	return rep, res
}

func seatReport(t *testing.T, rep recover.Report, name string) recover.SeatReport {
	t.Helper()
	for _, s := range rep.Seats {
		if s.Seat == name {
			return s
		}
	}
	t.Fatalf("no seat %s in the report: %+v", name, rep)
	return recover.SeatReport{}
}

// TestRevivalUnderCronKeepsTheSeatWorking: a seat started from a person's
// shell (claude on a PATH entry of theirs, the key by pass_env), driver and
// claude killed, revived by `pantty recover` run with cron's bare environment:
// the revival is verified on the same session and the next board message is
// processed once — counted at the stand-in, so a harness without its key or
// binary could not pass.
func TestRevivalUnderCronKeepsTheSeatWorking(t *testing.T) {
	r := newCronRig(t, "cron")
	r.startFromShell()
	r.Send("before", "first task")
	r.WaitState("before", seat.StateProcessed, 60*time.Second)
	sess := r.Session()

	// The dry run under cron's environment sees a launchable seat.
	rep, _ := r.bareSweep("--dry-run")
	if sr := seatReport(t, rep, r.Name); len(sr.Launch) != 0 {
		t.Fatalf("the seat should be launchable from cron's environment, recover says: %v", sr.Launch)
	}

	r.killAll()
	rep, res := r.bareSweep()
	sr := seatReport(t, rep, r.Name)
	if sr.Verdict != recover.Dead || !strings.HasPrefix(sr.Result, "verified") {
		t.Fatalf("recover under cron's environment: want dead → verified, got %+v\n%s\ndriver.log:\n%s", sr, res, r.DriverLog())
	}
	if got := r.Session(); got.ID != sess.ID {
		t.Fatalf("revived on session %s, want the same session %s", got.ID, sess.ID)
	}
	var lf seat.LaunchFile
	if err := seat.ReadState(r.Seat().LaunchPath(), &lf); err != nil {
		t.Fatal(err)
	}
	if lf.Env["ANTHROPIC_API_KEY"] != apiKey || !strings.HasPrefix(lf.Env["PATH"], r.shell["PATH"]) ||
		lf.Argv[0] != filepath.Join(strings.Split(r.shell["PATH"], ":")[0], "claude") {
		t.Fatalf("the revived launch did not use the recorded environment: argv[0] %s, PATH %q, key set %v",
			lf.Argv[0], lf.Env["PATH"], lf.Env["ANTHROPIC_API_KEY"] != "")
	}

	r.Send("after", "second task")
	st := r.WaitState("after", seat.StateProcessed, 60*time.Second)
	if st.State != seat.StateProcessed {
		t.Fatalf("message after the revival: %+v", st)
	}
	turns := r.Turns()
	if turns["before"] != 1 || turns["after"] != 1 {
		t.Fatalf("model turns per message at the stand-in: %v, want before=1 after=1", turns)
	}
}

// TestHarnessThatCannotStartAnswersFastInItsWords: a claude that exits at
// launch (here: an option it does not know) makes `seat start` exit 1 with
// claude's own words, the driver gives up instead of relaunching forever,
// harness-exit.toml keeps the words, and recover under cron's environment
// calls the seat dead naming them — never ok. A binary that does not exist is
// refused before tmux starts.
func TestHarnessThatCannotStartAnswersFastInItsWords(t *testing.T) {
	r := newCronRig(t, "broken", `args = ["--no-such-flag"]`)
	began := time.Now()
	res := r.RunEnv(r.shell, "", "seat", "start", r.Name)
	t.Logf("seat start answered exit %d after %s", res.Code, time.Since(began).Round(time.Millisecond))
	if res.Code != 1 || !strings.Contains(res.Stderr, "unknown option '--no-such-flag'") {
		t.Fatalf("seat start of a claude that exits at launch: want exit 1 with claude's words, got %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	ex, err := r.Seat().ReadHarnessExit()
	if err != nil || !ex.GaveUp || ex.InARow != seat.MaxLaunchFailures || !strings.Contains(ex.Words(), "unknown option") {
		t.Fatalf("harness-exit.toml: %+v (%v)", ex, err)
	}
	var doc telemetry.Document
	st := r.Run("status", r.Name, "--json")
	if err := json.Unmarshal([]byte(st.Stdout), &doc); err != nil || len(doc.Seats) != 1 ||
		doc.Seats[0].LastExit.Value == nil || !strings.Contains(*doc.Seats[0].LastExit.Value, "unknown option") {
		t.Fatalf("status should show claude's last words: %s", st)
	}
	began = time.Now()
	rep, _ := r.bareSweep()
	t.Logf("a recover sweep over the seat that cannot start took %s (report: %d ms)", time.Since(began).Round(time.Millisecond), rep.TookMS)
	sr := seatReport(t, rep, r.Name)
	if sr.Verdict != recover.Dead || !strings.Contains(sr.Reason, "unknown option") || strings.HasPrefix(sr.Result, "verified") {
		t.Fatalf("recover should call the seat dead in claude's words and not verify it, got %+v", sr)
	}

	missing := newCronRig(t, "nobinary", `command = "claude-not-installed"`)
	res = missing.RunEnv(missing.shell, "", "seat", "start", missing.Name)
	if res.Code != 1 || !strings.Contains(res.Stderr, `harness binary "claude-not-installed" not found`) {
		t.Fatalf("seat start with a missing binary: want exit 1 naming it, got %s", res)
	}
	if missing.ServerRunning() {
		t.Fatalf("a missing binary must be refused before tmux starts, but the seat's tmux server runs")
	}
}
