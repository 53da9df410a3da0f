package seat_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
)

// stubbornHarness is a seat command shaped like Gemini CLI 0.61.0: an outer
// process that ignores SIGHUP and SIGTERM runs the harness (the simulator,
// made to ignore them and a closed terminal too: PANTTY_SIM_STUBBORN) as its
// child, and a helper detached with setsid (out of the pane's process group)
// that ignores both as well. $0 of the helper carries mark, so a test can
// count the helpers of its own seat. `--version` (the start gates ask it)
// starts no helper.
const stubbornHarness = `#!/bin/sh
[ "$1" = --version ] && exec "$PANTTY_BIN" sim --version # the start gates ask
trap '' HUP TERM
setsid sh -c 'trap "" HUP TERM; while :; do sleep 1; done' %s </dev/null >/dev/null 2>&1 &
"$PANTTY_BIN" sim "$@"
wait
`

// stubbornSeat makes a seat whose command is stubbornHarness; helpers counts
// its live helpers.
func stubbornSeat(t *testing.T, name string) (h *seattest.Harness, helpers func() []int) {
	t.Helper()
	mark := fmt.Sprintf("helper-of-%s-%d", name, time.Now().UnixNano())
	script := filepath.Join(t.TempDir(), "stubborn.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(stubbornHarness, mark)), 0o755); err != nil {
		t.Fatal(err)
	}
	h = seattest.New(t, name, seattest.Env(map[string]string{"PANTTY_SIM_STUBBORN": "1", "PANTTY_BIN": seattest.Binary(t)}),
		seattest.TOML(fmt.Sprintf("command = %q", script)))
	helpers = func() []int {
		var out []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			var pid int
			if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
				continue
			}
			b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(b), mark) {
				if _, err := procid.Start(pid); err == nil { // not a zombie
					out = append(out, pid)
				}
			}
		}
		return out
	}
	t.Cleanup(func() {
		// Whatever the test's verdict, leave no stubborn process behind.
		proc.EndLaunch(h.Seat(), 0)
	})
	return h, helpers
}

// TestTmuxServerDeathLeavesOneHarnessPerSession: the seat's tmux server is
// killed while its harness ignores the hangup (as Gemini CLI 0.61.0 did). The
// driver relaunches on the same session, and by the time the new harness
// runs, the first launch's whole tree — the pane process, the harness, a
// helper it detached with setsid — is gone: one harness per session. After
// `seat stop` no process of the seat is left.
func TestTmuxServerDeathLeavesOneHarnessPerSession(t *testing.T) {
	t.Parallel()
	h, helpers := stubbornSeat(t, "stubborn")
	h.Start()
	first := h.Session()
	var sims, aides []int
	h.WaitFor("the harness and its helper", 30*time.Second, func() bool {
		sims, aides = h.HarnessPIDs(), helpers()
		return len(sims) == 1 && len(aides) == 1
	})
	firstSim, firstHelper := sims[0], aides[0]

	killed := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := h.Tmux().KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	h.WaitFor("the relaunch on the same session", time.Minute, func() bool {
		sess := h.Session()
		sims = h.HarnessPIDs()
		return sess.Launches > first.Launches && slices.ContainsFunc(sims, func(p int) bool { return p != firstSim })
	})
	t.Logf("kill-server → relaunched in %s", time.Since(killed).Round(time.Millisecond))
	if sess := h.Session(); sess.ID != first.ID {
		t.Fatalf("relaunched on session %s, want the seat's %s", sess.ID, first.ID)
	}
	if len(sims) != 1 || slices.Contains(sims, firstSim) {
		t.Fatalf("after the relaunch: harness pids %v (the first was %d): want exactly one, the new one\ndriver.log:\n%s", sims, firstSim, h.DriverLog())
	}
	if aides = helpers(); slices.Contains(aides, firstHelper) {
		t.Fatalf("after the relaunch: the first launch's detached helper %d still runs (helpers %v)\ndriver.log:\n%s", firstHelper, aides, h.DriverLog())
	}
	if !strings.Contains(h.DriverLog(), "processes of its launch run on") {
		t.Errorf("driver.log does not say what ran on after the server died:\n%s", h.DriverLog())
	}

	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s\ndriver.log:\n%s", r, h.DriverLog())
	}
	if left := proc.LaunchProcs(h.Seat()); len(left) > 0 || len(h.HarnessPIDs()) > 0 || len(helpers()) > 0 {
		t.Fatalf("after seat stop: still running: %v, harnesses %v, helpers %v", left, h.HarnessPIDs(), helpers())
	}
}

// TestStopEndsWhatEscapedThePaneProcess: with no driver left, the pane
// process is killed (SIGKILL: it cannot pass anything on). Its harness child
// dies with it (PR_SET_PDEATHSIG), but the simulator below that and a helper
// detached with setsid run on, reparented to pid 1, out of the pane's tree.
// `seat stop` finds them by the seat's markers and ends them.
func TestStopEndsWhatEscapedThePaneProcess(t *testing.T) {
	t.Parallel()
	h, helpers := stubbornSeat(t, "escaped")
	h.Start()
	h.WaitFor("the harness and its helper", 30*time.Second, func() bool { return len(h.HarnessPIDs()) == 1 && len(helpers()) == 1 })
	if err := syscall.Kill(h.Owner().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	pane := h.Session().PanePID
	if err := syscall.Kill(pane, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the pane process to die", 30*time.Second, func() bool { _, err := procid.Start(pane); return err != nil })
	if len(h.HarnessPIDs()) != 1 || len(helpers()) != 1 {
		t.Fatalf("the test's premise: the harness and its helper outlive their pane process; harnesses %v, helpers %v", h.HarnessPIDs(), helpers())
	}
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	if left := proc.LaunchProcs(h.Seat()); len(left) > 0 || len(h.HarnessPIDs()) > 0 || len(helpers()) > 0 {
		t.Fatalf("after seat stop: still running: %v, harnesses %v, helpers %v", left, h.HarnessPIDs(), helpers())
	}
}

// TestAdoptingDriverEndsAnEarlierLaunch: a driver that adopts the seat's live
// pane also ends what runs of an earlier launch beside it (here a process
// carrying the seat's markers outside the pane's tree, as a harness left by a
// dead server would): one harness per session.
func TestAdoptingDriverEndsAnEarlierLaunch(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "adopter")
	h.Start()
	if err := syscall.Kill(h.Owner().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := h.Seat()
	old := exec.Command("sleep", "600")
	old.Env = append(os.Environ(), launch.SeatEnv+"="+s.Name, launch.SeatHomeEnv+"="+s.Home)
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { old.Wait(); close(reaped) }()
	t.Cleanup(func() { old.Process.Kill(); <-reaped })
	h.WaitFor("the driver's lock to be free", 30*time.Second, func() bool { _, live, _ := s.LiveOwner(); return !live })
	r := h.Start()
	if !strings.Contains(r.Stdout, "adopted") {
		t.Fatalf("second start: want the live harness adopted, got %s", r)
	}
	select {
	case <-reaped:
	case <-time.After(10 * time.Second):
		t.Fatalf("the earlier launch's process %d still runs beside the adopted pane\ndriver.log:\n%s", old.Process.Pid, h.DriverLog())
	}
}

// TestSurvivorsHintEndsThemWhenPasted: the error naming a survivor of a
// seat's launch (seat stop's exit 1, recover's unverified revival) ends with a
// command; pasted into a shell, it ends the processes it names. (As root every
// process dies of SIGKILL, so a real survivor cannot be made here: the
// command is checked on a process of the test's own.)
func TestSurvivorsHintEndsThemWhenPasted(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "survivor")
	var procs []proc.LaunchProc
	var reaped []chan struct{}
	for range 2 {
		p := exec.Command("sleep", "600")
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		t.Cleanup(func() { p.Process.Kill(); <-done })
		procs = append(procs, proc.LaunchProc{PID: p.Process.Pid, Cmd: "sleep 600"})
		reaped = append(reaped, done)
	}
	msg := proc.SurvivorsError(h.Seat(), procs).Error()
	_, command, ok := strings.Cut(msg, "end them with: ")
	if !ok || !strings.Contains(msg, fmt.Sprintf("pid %d (sleep 600)", procs[1].PID)) {
		t.Fatalf("survivors error %q: want each pid named and a command", msg)
	}
	if out, err := exec.Command("sh", "-c", command).CombinedOutput(); err != nil {
		t.Fatalf("pasted %q: %v %s", command, err, out)
	}
	for i, done := range reaped {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("pasted %q: pid %d still runs", command, procs[i].PID)
		}
	}
}
