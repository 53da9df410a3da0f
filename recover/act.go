package recover

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"golang.org/x/sys/unix"
)

// Bounds of the actions (every external step of a sweep has one).
const (
	askTimeout    = 10 * time.Second // a release request to a live driver
	cancelTimeout = 25 * time.Second // a cancel request: the driver verifies for up to 10s
	lockFreeWait  = 10 * time.Second // for owner.lock to be let go after a driver left
	verifyMinimum = 5 * time.Second  // the least a revival is given to show itself
	// verifyMaximum bounds how long one sweep waits for a revival to show
	// itself, whatever the seat's ready_timeout: a scheduler runs recover every
	// minute and one slow seat must not hold the sweep (and the seats after it)
	// for minutes. A revival not shown by then is unverified now and looked at
	// again by the next sweep, which clears the failure count when it sees ok.
	verifyMaximum  = 20 * time.Second
	verifyPollTick = 250 * time.Millisecond
)

// plan describes in words what recover does for a cause (also the --dry-run text).
func plan(v verdict) string {
	switch v.Cause {
	case CauseDriverGone, CauseLaunchFails:
		return "start a driver (it adopts the live harness or relaunches it with --resume)"
	case CauseWedged:
		return "kill the driver (only if its pid and start time match owner.toml), wait for the lock, start a replacement"
	case CauseTurnStuck:
		if v.Responsive {
			return "cancel the turn through the driver; if still stuck, remove the driver, kill the harness, start a driver (resume)"
		}
		return "kill the stuck driver (identity checked), kill the harness, start a driver (resume)"
	case CauseNoCapability:
		return "replace the driver (release, or kill with identity check) and restart the harness; the new driver resumes the session"
	case CauseHarnessDown, CauseNotReady:
		return "replace the driver (release, or kill with identity check); the new driver relaunches the harness with --resume"
	case CauseNoModel:
		return "none: the live driver holds the queue and re-probes; counted as a means failure (the ladder descends after demote_after)"
	}
	return "nothing"
}

// recoverSeat acts on a dead seat by its cause and verifies revival: a fresh
// heartbeat from the new driver and the harness back on the same session.
// It returns what it did and whether revival was verified (and if not, why).
func (sw *sweeper) recoverSeat(o *observation, v verdict) (did []string, verified bool, why string) {
	step := func(format string, a ...any) { did = append(did, fmt.Sprintf(format, a...)) }
	fail := func(err error) ([]string, bool, string) { return did, false, err.Error() }

	if v.Cause == CauseNoModel {
		// Restarting cannot fix credentials or a network; the live driver
		// re-probes by itself. The attempt counts as an unverified means
		// recovery, so the ladder's existing rule lowers the floor.
		return []string{"left the live driver to re-probe"}, false, "the harness still cannot reach the model: " + v.Reason
	}
	if v.Cause == CauseTurnStuck && v.Responsive {
		id := ""
		if e := o.inFlight(); e != nil {
			id = e.Msg.ID
		}
		res, err := o.s.Ask(state.Request{Kind: state.CtlCancel, To: o.owner.Holder}, cancelTimeout)
		if err == nil {
			step("cancelled through the driver (%s)", res.Detail)
			if st, err := o.s.ReadStatus(id); err == nil && inbox.Final(st.State) {
				return did, true, ""
			}
		} else {
			step("cancel request: %v", oneLine(err.Error()))
		}
	}
	// A revival is a start: the same gates apply (a registry row can expire, a
	// harness can be upgraded to an unmeasured version while the seat runs).
	// Checked before anything is removed or killed.
	if _, _, err := gates.CheckStart(o.s.Home, o.cfg, sw.now); err != nil {
		return fail(fmt.Errorf("not restarted: %v", err))
	}
	// And the checks of `seat start`, on the recorded environment: a driver
	// started for a seat that cannot work would only fail in the harness's
	// words (or, without its key, come up unable to do anything) at every
	// sweep. The reason and the command that fixes it go in the verdict.
	if err := harness.CanWork(o.s, o.cfg, nil, false, "pantty seat start "+o.s.Name); err != nil {
		return fail(fmt.Errorf("not restarted: %v", err))
	}
	if o.ownerLive {
		how, err := sw.removeDriver(o, v.Responsive)
		if how != "" {
			step("%s", how)
		}
		if err != nil {
			return fail(err)
		}
	} else if !seat.WaitFree(o.s, lockFreeWait) {
		return fail(fmt.Errorf("owner.lock is still held although no live driver is recorded"))
	}
	if v.Cause == CauseTurnStuck || v.Cause == CauseNoCapability {
		// The harness itself does not work: the new driver must not adopt it.
		how, err := sw.killHarness(o)
		if how != "" {
			step("%s", how)
		}
		if err != nil {
			return fail(err)
		}
	}
	if sw.opts.Pantty == "" {
		return fail(fmt.Errorf("no pantty binary to start a driver with"))
	}
	start := sw.opts.Now()
	pid, exited, err := sw.spawnDriver(o)
	if err != nil {
		return fail(err)
	}
	o.spawned = pid
	step("started driver pid %d", pid)
	if ok, why := sw.verify(o, start, exited); !ok {
		return did, false, why
	}
	if why := survivors(o.s, o.cfg); why != "" {
		return did, false, why
	}
	return did, true, ""
}

// survivors names the processes of the seat's earlier launches still running
// beside the revived one (the new driver ends them before it launches or
// when it adopts: one that outlives that is said, never passed as revived).
func survivors(s state.Seat, cfg config.Config) string {
	sess, err := s.SessionFile().Read()
	if err != nil {
		return ""
	}
	if state.RunsOn(cfg, sess) == config.TransportAppServer {
		// The launch's process is the app server's pane process (`pantty
		// __exec …/server-launch.toml`), and its viewer runs in a pane of
		// its own: the pane-tree rule below would name both as an earlier
		// launch's and fail every revival.
		// The new driver ends an earlier server before it starts its own.
		return ""
	}
	if left := proc.LaunchProcsOutside(s, sess.PanePID); len(left) > 0 {
		return "revived, but processes of an earlier launch run beside it: " + proc.SurvivorsError(s, left).Error()
	}
	return ""
}

// removeDriver makes the seat's driver leave: a responsive one is asked to
// release the seat (the harness keeps running); one that does not answer is
// killed, but only while its pid and start time still match owner.toml.
func (sw *sweeper) removeDriver(o *observation, responsive bool) (string, error) {
	if responsive {
		if _, err := o.s.Ask(state.Request{Kind: state.CtlRelease, To: o.owner.Holder}, askTimeout); err == nil && seat.WaitFree(o.s, lockFreeWait) {
			return fmt.Sprintf("driver pid %d released the seat", o.owner.PID), nil
		}
	}
	if err := killIdentified(o.s, o.owner); err != nil {
		return "", err
	}
	if !seat.WaitFree(o.s, lockFreeWait) {
		return "", fmt.Errorf("%w: killed driver pid %d, but owner.lock is still held after %s", state.ErrUnobservable, o.owner.PID, lockFreeWait)
	}
	return fmt.Sprintf("killed driver pid %d (pid and start time matched owner.toml)", o.owner.PID), nil
}

// killIdentified sends SIGKILL to the recorded owner only if owner.toml still
// names it and the process with that pid started when the record says. A pidfd
// pins the process between the check and the signal, so a recycled pid can
// never be hit.
func killIdentified(s state.Seat, seen state.Owner) error {
	cur, err := s.OwnerFile().Read()
	if err != nil {
		return fmt.Errorf("%w: re-read owner.toml before killing: %v", state.ErrUnobservable, err)
	}
	if cur.Holder != seen.Holder || cur.PID != seen.PID || cur.PIDStart != seen.PIDStart {
		return fmt.Errorf("owner.toml changed while recovering (now %s): not killing", cur)
	}
	host, _ := os.Hostname()
	if cur.Host != host {
		return fmt.Errorf("the driver runs on %s, not here (%s): not killing", cur.Host, host)
	}
	fd, err := unix.PidfdOpen(cur.PID, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // already gone
		}
		if !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("pidfd for pid %d: %v", cur.PID, err)
		}
		// No pidfd on this kernel: check, then signal (the window is microseconds).
		if !procid.Alive(cur.PID, cur.PIDStart) {
			return fmt.Errorf("pid %d is no longer the driver owner.toml names (start time differs): not killing", cur.PID)
		}
		return syscall.Kill(cur.PID, syscall.SIGKILL)
	}
	defer unix.Close(fd)
	if !procid.Alive(cur.PID, cur.PIDStart) {
		return fmt.Errorf("pid %d is no longer the driver owner.toml names (start time differs): not killing", cur.PID)
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill pid %d: %v", cur.PID, err)
	}
	return nil
}

// killHarness ends a harness that will not stop (a turn stuck past its ceiling):
// with the driver gone, recover holds the seat's lock itself while it kills the
// pane's process group, so nothing else touches the pane meanwhile. The pane
// stays (remain-on-exit) for the new driver to respawn with --resume.
func (sw *sweeper) killHarness(o *observation) (string, error) {
	lock, err := seat.Acquire(o.s)
	if err != nil {
		return "", fmt.Errorf("take owner.lock to kill the harness: %w", err)
	}
	defer lock.Release()
	panes, err := sw.listPanes(o.socket)
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		return "", fmt.Errorf("%w: tmux: %v", state.ErrUnobservable, err)
	}
	var pane *tmux.Pane
	for i := range panes {
		p := panes[i]
		if p.Session == o.sess.TmuxName && p.ID == o.sess.PaneID && p.PID == o.sess.PanePID && !p.Dead {
			pane = &p
		}
	}
	if pane == nil {
		return "the harness was already gone", nil
	}
	// Every process of the seat's launch, the pane's tree and what escaped it
	// (seat.EndLaunch waits on pidfds for each to die).
	ended, err := proc.EndLaunch(o.s, 0)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("killed the harness (pane %s, pid %d; %d processes: %s)", pane.ID, pane.PID, len(ended), proc.Pids(ended)), nil
}

// spawnDriver starts `pantty --home H __drive NAME` detached (own session,
// stdio to driver.log), the way `seat start` does, without recording intent
// (the person's intent is unchanged). The driver is told the tmux socket
// session.toml recorded, so a driver started by cron (whose TMUX_TMPDIR and
// environment may differ) finds the same server.
func (sw *sweeper) spawnDriver(o *observation) (int, <-chan error, error) {
	logf, err := o.s.OpenDriverLog()
	if err != nil {
		return 0, nil, err
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, nil, err
	}
	defer devnull.Close()
	fmt.Fprintf(logf, "pantty recover: starting a driver for seat %s (%s)\n", o.s.Name, time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command(sw.opts.Pantty, "--home", o.s.Home, "__drive", o.s.Name)
	cmd.Env = os.Environ()
	if o.hasSess && o.sess.Socket != "" && o.cfg.Tmux.Socket == "" {
		cmd.Env = append(cmd.Env, "PANTTY_TMUX_SOCKET="+o.sess.Socket)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("start driver: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return cmd.Process.Pid, exited, nil
}

// verify re-probes the seat after acting until it is revived or the bound
// passes: a live owner, a heartbeat from that owner written after the action
// and not stale, the harness up (the driver out of starting/relaunching, which
// it leaves only on the harness's SessionStart for the seat's session), the
// same session id as before, and (a resident seat) the pane alive with the recorded pid. It
// wakes on the seat directory's file events, with a slow tick as a safety net.
func (sw *sweeper) verify(o *observation, after time.Time, exited <-chan error) (bool, string) {
	limit := o.cfg.ReadyTimeout.Duration + staleIntervals*o.interval()
	limit = min(max(limit, verifyMinimum), verifyMaximum)
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(verifyPollTick)
	defer tick.Stop()
	var events chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		if w.Add(o.s.Dir) == nil {
			events = w.Events
		}
	}
	why := "no sign of revival yet"
	for {
		var ok bool
		if ok, why = sw.revived(o, after); ok {
			return true, ""
		}
		select {
		case <-events:
		case <-tick.C:
		case err := <-exited:
			exited = nil
			if ok, w2 := sw.revived(o, after); ok {
				return true, ""
			} else {
				why = w2
			}
			return false, fmt.Sprintf("the new driver exited (%v) before the seat was revived: %s; driver.log: %s", err, why, logTail(o.s.DriverLogPath()))
		case <-deadline.C:
			return false, fmt.Sprintf("not revived within %s (the bound of one sweep; the next sweep looks again): %s", limit, why)
		}
	}
}

// revived checks the revival conditions once; the tmux call is made only when
// every file already says revived.
func (sw *sweeper) revived(o *observation, after time.Time) (bool, string) {
	s := o.s
	owner, err := s.OwnerFile().Read()
	if err != nil || !owner.Live() {
		return false, "no live driver yet"
	}
	hb, err := s.HeartbeatFile().Read()
	switch {
	case err != nil:
		return false, "no heartbeat yet"
	case hb.Holder != owner.Holder || !hb.At.After(after):
		return false, fmt.Sprintf("no heartbeat from the new driver %s yet", owner.Holder)
	case sw.opts.Now().Sub(hb.At) > staleIntervals*hb.Interval.Duration:
		return false, fmt.Sprintf("the new driver's heartbeat is stale (%s)", shortDur(sw.opts.Now().Sub(hb.At)))
	case hb.Phase == state.PhaseStarting || hb.Phase == state.PhaseRelaunching:
		return false, fmt.Sprintf("the harness is not up yet (phase %s%s)", hb.Phase, suffix(hb.Waiting))
	}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return false, "no session.toml"
	}
	if o.hasSess && o.sess.ID != "" && sess.ID != o.sess.ID {
		return false, fmt.Sprintf("the harness runs session %s, not the seat's %s", sess.ID, o.sess.ID)
	}
	if o.cfg.Shape == config.ShapeTurn || state.RunsOn(o.cfg, sess) == config.TransportAppServer {
		return true, "" // no pane to look at: the harness runs only during a turn, or is the driver's app server (harnessDown)
	}
	panes, err := sw.listPanes(sess.Socket)
	if err != nil {
		return false, "tmux: " + err.Error()
	}
	for _, p := range panes {
		if p.Session == sess.TmuxName && p.ID == sess.PaneID && p.PID == sess.PanePID && !p.Dead {
			return true, ""
		}
	}
	return false, fmt.Sprintf("pane %s (pid %d) is not alive", sess.PaneID, sess.PanePID)
}

// logLineMax bounds each log line a report quotes (a driver.log line can
// carry a whole pane's tail: a failed start's health reason was ~1.5 KB).
const logLineMax = 240

// logTail returns the last lines of a log, on one line, for a report.
func logTail(path string) string {
	b, err := fsafe.ReadTail(path, 64<<10)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(string(bytes.TrimRight(b, "\n")), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	for i, l := range lines {
		lines[i] = termtext.Cut(l, logLineMax) // a report's reason stays readable
	}
	return state.JoinLines(lines)
}
