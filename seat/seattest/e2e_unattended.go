package seattest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
)

// The unattended half of the E2E suite: a seat revived by a scheduler with
// a bare environment, and a harness that cannot start.

// CronSeat is how a seat is started by a person and revived by a scheduler:
// the harness's command is a name found only on the person's PATH (Binary is
// its link there), its secrets come by pass_env from the person's Shell,
// and `pantty recover` then runs with cron's bare environment.
type CronSeat struct {
	Shell  map[string]string
	Binary string
}

// CronBinDir makes a directory that only the person's PATH has, with a link
// named name to the harness binary bin: what `command = "NAME"` finds there.
func CronBinDir(t *testing.T, dir, name, bin string) string {
	t.Helper()
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(binDir, name)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(binDir, name)
}

// 6. A seat started from a person's shell (the harness on a PATH entry of
// theirs, its secrets by pass_env), driver and harness killed, revived by
// `pantty recover` run with cron's bare environment: the dry run sees it
// launchable, the revival is verified on the same session with the recorded
// environment, and the next board message is processed once — counted at
// the stand-in, so a harness without its key or binary could not pass.
func (s E2E) cron(t *testing.T) {
	r, cs := s.Cron(t, s.Prefix+"-cron")
	if res := r.RunEnv(cs.Shell, "", "seat", "start", r.Name); res.Code != 0 {
		t.Fatalf("seat start from the person's shell: %s\ndriver.log:\n%s", res, r.DriverLog())
	}
	r.Send("before", "first task")
	r.Processed("before")
	sess := r.Session()
	if rep, _ := r.BareSweep(t, "--dry-run"); len(SeatReport(t, rep, r.Name).Launch) != 0 {
		t.Fatalf("the seat should be launchable from cron's environment, recover says: %v", SeatReport(t, rep, r.Name).Launch)
	}
	o := r.Owner()
	// The harness is the pane's (proc.HarnessPID), or session.toml's pid
	// itself where no pane process runs it (Codex's app server): killed by
	// pid as well as by the pane's group, which a pid that leads no pane
	// process does not name.
	harness, err := proc.HarnessPID(sess.PanePID)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(o.PID, syscall.SIGKILL)
	proc.KillGroup(sess.PanePID)
	syscall.Kill(harness, syscall.SIGKILL)
	r.WaitFor("driver and harness gone", 20*time.Second, func() bool {
		_, err := procid.Start(sess.PanePID)
		return !procid.Alive(o.PID, o.PIDStart) && err != nil
	})
	// The flock can outlive the killed driver's pid for a moment (recover
	// then rightly says unknown): wait until it is free.
	if !seat.WaitFree(r.Seat(), 20*time.Second) {
		t.Fatal("owner.lock still held after the driver died")
	}
	rep, res := r.BareSweep(t)
	sr := SeatReport(t, rep, r.Name)
	if sr.Verdict == "dead" && strings.HasPrefix(sr.Result, "not verified") && strings.Contains(sr.Result, "not up yet") {
		// One sweep waits at most 20 s for a revival to show itself; a loaded
		// machine can take longer to bring a harness up (Gemini CLI took 20 s
		// to fire SessionStart under the full suite on 2 cores, 2026-12-04).
		// recover says so and leaves the driver it started running; cron's
		// next run looks again and must find the seat ok, untouched.
		t.Logf("first sweep: %s; sweeping again as cron's next run would", sr.Result)
		r.WaitFor("the revived harness to come up", 60*time.Second, func() bool {
			hb, err := r.Seat().HeartbeatFile().Read()
			return err == nil && hb.Phase == state.PhaseIdle
		})
		rep, res = r.BareSweep(t)
		if sr = SeatReport(t, rep, r.Name); sr.Verdict != "ok" || sr.Result != "" {
			t.Fatalf("recover's next sweep under cron's environment: want ok and nothing done, got %+v\n%s\ndriver.log:\n%s", sr, res, r.DriverLog())
		}
	} else if sr.Verdict != "dead" || !strings.HasPrefix(sr.Result, "verified") {
		t.Fatalf("recover under cron's environment: want dead → verified, got %+v\n%s\ndriver.log:\n%s", sr, res, r.DriverLog())
	}
	if got := r.Session().ID; got != sess.ID {
		t.Fatalf("revived on session %s, want the same session %s", got, sess.ID)
	}
	lf, err := r.Seat().LaunchFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	if bin := lf.HarnessArgv()[0]; bin != cs.Binary || !strings.HasPrefix(lf.Env["PATH"], cs.Shell["PATH"]) {
		t.Fatalf("the revived launch did not use the recorded environment: the harness %s (want %s), PATH %q", bin, cs.Binary, lf.Env["PATH"])
	}
	r.Send("after", "second task")
	r.Processed("after")
	if turns := r.Turns(); turns["before"] != 1 || turns["after"] != 1 {
		t.Fatalf("model turns per message at the stand-in: %v, want before=1 after=1", turns)
	}
}

// BareSweep runs `pantty recover --json` as cron runs it.
func (r *E2ERig) BareSweep(t *testing.T, args ...string) (SweepReport, Result) {
	t.Helper()
	res := r.RunBare(append([]string{"recover", "--json"}, args...)...)
	var rep SweepReport
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		t.Fatalf("recover --json under cron's environment: not a report (%v): %s", err, res)
	}
	return rep, res
}

// SeatReport is the report's row for the seat name (the test fails without one).
func SeatReport(t *testing.T, rep SweepReport, name string) SweptSeat {
	t.Helper()
	for _, s := range rep.Seats {
		if s.Seat == name {
			return s
		}
	}
	t.Fatalf("no seat %s in the report: %+v", name, rep)
	return SweptSeat{}
}

// 7. A harness that exits at launch (an argument it refuses: E2E.BadArg, or
// E2E.BadTOML's seat.toml lines) makes `seat
// start` exit 1 with the harness's own words; the driver gives up instead of
// relaunching forever, harness-exit.toml and `pantty status` keep the words,
// and recover under cron's environment calls the seat dead naming them —
// never ok. A binary that does not exist is refused before tmux starts.
func (s E2E) cannotStart(t *testing.T) {
	bad := s.BadTOML
	if bad == nil {
		bad = []string{fmt.Sprintf("args = [%q]", s.BadArg)}
	}
	r, cs := s.Cron(t, s.Prefix+"-broken", bad...)
	began := time.Now()
	res := r.RunEnv(cs.Shell, "", "seat", "start", r.Name)
	t.Logf("seat start answered exit %d after %s", res.Code, time.Since(began).Round(time.Millisecond))
	if res.Code != 1 || !strings.Contains(res.Stderr, s.BadWords) {
		t.Fatalf("seat start of a harness that exits at launch: want exit 1 with %q, got %s\ndriver.log:\n%s", s.BadWords, res, r.DriverLog())
	}
	ex, err := r.Seat().HarnessExitFile().Read()
	if err != nil || !ex.GaveUp || ex.InARow != state.MaxLaunchFailures || !strings.Contains(ex.Words(), s.BadWords) {
		t.Fatalf("harness-exit.toml: %+v (%v)", ex, err)
	}
	if st := r.Run("status", r.Name); !strings.Contains(st.Stdout, s.BadWords) {
		t.Fatalf("pantty status should show the harness's last words %q: %s", s.BadWords, st)
	}
	rep, _ := r.BareSweep(t)
	if sr := SeatReport(t, rep, r.Name); sr.Verdict != "dead" || !strings.Contains(sr.Reason, s.BadWords) || strings.HasPrefix(sr.Result, "verified") {
		t.Fatalf("recover should call the seat dead in the harness's words and not verify it, got %+v", sr)
	}
	missing, ms := s.Cron(t, s.Prefix+"-nobinary", `command = "harness-not-installed"`)
	res = missing.RunEnv(ms.Shell, "", "seat", "start", missing.Name)
	if res.Code != 1 || !strings.Contains(res.Stderr, `harness binary "harness-not-installed" not found`) {
		t.Fatalf("seat start with a missing binary: want exit 1 naming it, got %s", res)
	}
	if missing.ServerRunning() {
		t.Fatal("a missing binary must be refused before tmux starts, but the seat's tmux server runs")
	}
}

// WithCommand is seat.toml lines with `command = "name"` first, unless extra
// names a command of its own.
func WithCommand(name string, extra ...string) []string {
	for _, l := range extra {
		if strings.HasPrefix(strings.TrimSpace(l), "command =") {
			return extra
		}
	}
	return append([]string{fmt.Sprintf("command = %q", name)}, extra...)
}
