package seat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// StartOptions steer Start.
type StartOptions struct {
	Takeover   string       // holder id to replace; must name the live holder
	RefreshEnv bool         // replace launch-env.toml with this shell's environment
	Pantty     string       // absolute path of the pantty binary (the driver and hooks run it)
	Progress   func(string) // progress lines for a terminal; nil for none
	// Check says whether the seat's launch can work (harness.CanWork: every
	// pass_env variable set, the harness's home prepared); Start calls it
	// before it records or changes anything. nil checks nothing.
	Check func(config.Config) error
}

// Start records the intent to run and spawns the seat's driver, then waits for
// the driver's own verdict: ready (harness up, lock held), refused (another live
// holder, named: ErrOwned), or an error naming what did not come up.
func Start(s state.Seat, o StartOptions) (Progress, error) {
	cfg, err := s.LoadConfig()
	if err != nil {
		return Progress{}, err
	}
	owner, live, err := s.LiveOwner()
	if err != nil {
		return Progress{}, fmt.Errorf("%w: %v", state.ErrUnobservable, err)
	}
	switch {
	case live && o.Takeover == "" && !o.RefreshEnv:
		return Progress{}, fmt.Errorf("%w: seat %q is held by %s; 'pantty seat start %s --takeover %s' replaces it",
			state.ErrOwned, s.Name, owner, s.Name, owner.Holder)
	case live && o.Takeover != "" && o.Takeover != owner.Holder:
		return Progress{}, fmt.Errorf("%w: --takeover names %s, but seat %q is held by %s", state.ErrOwned, o.Takeover, s.Name, owner)
	}
	// Whether the launch can work is checked before anything is recorded,
	// evicted or spawned: a refused start changes nothing.
	if o.Check != nil {
		if err := o.Check(cfg); err != nil {
			return Progress{}, err
		}
	}
	if err := s.Ensure(); err != nil {
		return Progress{}, err
	}
	switch {
	case live && o.Takeover == "" && o.RefreshEnv:
		// A key rotation on a running seat: record it for the next launch (a
		// relaunch, a revival, a rung switch); the live harness keeps its own.
		_, what, err := launch.RecordLaunchEnv(s, cfg, os.Environ(), "seat start --refresh-env", true)
		if err != nil {
			return Progress{}, err
		}
		progress(o, "%s", what)
		return Progress{State: StateEnvRecorded, Holder: owner.Holder}, nil
	case live:
		progress(o, "asking %s to release the seat", owner.Holder)
		if err := evict(s, owner, state.CtlRelease); err != nil {
			return Progress{}, err
		}
	case o.Takeover != "":
		progress(o, "no live holder (last was %s): starting normally", owner.Holder)
	}
	by := "seat start"
	if o.RefreshEnv {
		by = "seat start --refresh-env"
	}
	_, what, err := launch.RecordLaunchEnv(s, cfg, os.Environ(), by, o.RefreshEnv)
	if err != nil {
		return Progress{}, err
	}
	progress(o, "%s", what)
	if err := s.SetIntent(state.IntentRunning, "seat start"); err != nil {
		return Progress{}, err
	}
	return spawnDriver(s, cfg, o)
}

// StateEnvRecorded is the Progress state Start returns for --refresh-env on a
// seat whose live driver keeps running: the environment was recorded for the
// seat's next launch and nothing was started.
const StateEnvRecorded = "env-recorded"

// StateHeld is the driver's verdict when the harness came up showing a
// dialog instead of its input box: the driver keeps running and holds the
// queue (pantty answers no dialog), and start fails, naming the dialog and
// the fix, rather than saying "started".
const StateHeld = "held"

func progress(o StartOptions, format string, a ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, a...))
	}
}

// evict asks a live holder to leave (release or stop) and waits for its lock to
// be free; a holder that does not answer is killed, but only when its pid and
// start time still match the record.
func evict(s state.Seat, owner state.Owner, kind string) error {
	_, err := s.Ask(state.Request{Kind: kind}, 20*time.Second)
	if err == nil && WaitFree(s, 10*time.Second) {
		return nil
	}
	if !owner.Live() {
		if WaitFree(s, 5*time.Second) {
			return nil
		}
		return fmt.Errorf("%w: seat %q: the lock is still held after its holder %s exited", state.ErrUnobservable, s.Name, owner.Holder)
	}
	syscall.Kill(owner.PID, syscall.SIGKILL)
	if !WaitFree(s, 10*time.Second) {
		return fmt.Errorf("%w: seat %q: holder %s did not let go of the lock", state.ErrUnobservable, s.Name, owner)
	}
	return nil
}

// spawnDriver starts `pantty --home H __drive NAME` detached (own session, stdio to
// driver.log) with a pipe on fd 3 for its progress and verdict.
func spawnDriver(s state.Seat, cfg config.Config, o StartOptions) (Progress, error) {
	logf, err := s.OpenDriverLog()
	if err != nil {
		return Progress{}, err
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return Progress{}, err
	}
	defer pr.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return Progress{}, err
	}
	defer devnull.Close()
	cmd := exec.Command(o.Pantty, "--home", s.Home, "__drive", s.Name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return Progress{}, fmt.Errorf("start driver: %w", err)
	}
	pw.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	lines := make(chan Progress)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var p Progress
			if json.Unmarshal(sc.Bytes(), &p) == nil {
				lines <- p
			}
		}
	}()
	deadline := time.NewTimer(cfg.ReadyTimeout.Duration + 15*time.Second)
	defer deadline.Stop()
	for {
		select {
		case p, ok := <-lines:
			if !ok {
				err := <-exited
				return Progress{}, fmt.Errorf("driver exited before the seat was ready (%v); see %s", err, s.DriverLogPath())
			}
			switch p.State {
			case "progress":
				progress(o, "%s", p.Text)
			case "ready":
				return p, nil
			case StateHeld:
				// The driver runs and holds the queue; the caller must not
				// read this as started.
				return p, fmt.Errorf("seat %q runs (holder %s) but did not start: %s", s.Name, p.Holder, p.Text)
			case "refused":
				awaitExit(exited)
				// The driver's text is its own ErrOwned refusal: class it once.
				return p, fmt.Errorf("%w: %s", state.ErrOwned, strings.TrimPrefix(p.Text, state.ErrOwned.Error()+": "))
			case "error":
				awaitExit(exited)
				return p, errors.New(p.Text)
			}
		case <-deadline.C:
			return Progress{}, fmt.Errorf("%w: seat %q: the driver gave no verdict within %s; see %s",
				state.ErrUnobservable, s.Name, cfg.ReadyTimeout.Duration+15*time.Second, s.DriverLogPath())
		}
	}
}

// awaitExit waits (bounded) for a driver that gave a failing verdict to exit,
// so that when start reports the failure the driver no longer holds the lock
// nor looks live in owner.toml (a start retried at once is not refused by it).
func awaitExit(exited <-chan error) {
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
	}
}

// Stop records the intent to stop, asks the live driver to stop the harness and
// exit, and then makes sure the seat's tmux session and every process of its
// launches are gone (endStopped).
// All state files stay.
//
// A state root that cannot be written (full, read-only) must not keep a
// person from stopping the seat: the driver is then asked by SIGTERM instead
// of a control request (which is a file), the harness and its tmux session
// are ended the same way, and the error says the intent is not recorded —
// until it is, recover would start the seat again once it can write.
func Stop(s state.Seat) error {
	intentErr := s.SetIntent(state.IntentStopped, "seat stop")
	if intentErr != nil && !Unwritable(intentErr) {
		return intentErr
	}
	owner, live, err := s.LiveOwner()
	if err != nil {
		return fmt.Errorf("%w: %v", state.ErrUnobservable, err)
	}
	if live {
		if intentErr != nil {
			err = signalStop(s, owner)
		} else {
			err = evict(s, owner, state.CtlStop)
		}
		if err != nil {
			return err
		}
	}
	if err := endHarness(s, intentErr == nil); err != nil {
		return err
	}
	if intentErr != nil {
		return fmt.Errorf("seat %q: the driver and the harness are stopped, but the intent could not be recorded (%v): once the state root is writable, run: pantty seat stop %s",
			s.Name, intentErr, s.Name)
	}
	return nil
}

// Unwritable reports whether err is a write that failed for want of a
// writable state root (no space, read-only, over quota) rather than for a
// reason of the file itself.
func Unwritable(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EDQUOT)
}

// signalStop ends a live driver without a control request: SIGTERM, which
// its loop takes as "release the seat", then SIGKILL if it does not let go.
func signalStop(s state.Seat, owner state.Owner) error {
	syscall.Kill(owner.PID, syscall.SIGTERM)
	if WaitFree(s, 10*time.Second) {
		return nil
	}
	syscall.Kill(owner.PID, syscall.SIGKILL)
	if !WaitFree(s, 10*time.Second) {
		return fmt.Errorf("%w: seat %q: holder %s did not let go of the lock", state.ErrUnobservable, s.Name, owner)
	}
	return nil
}

// stopLockWait bounds how long a stop waits for a driver that is leaving
// on its own to free the lock.
const stopLockWait = 5 * time.Second

// endHarness kills the seat's tmux session and ends what is left of its
// launches (endStopped) once no driver holds the seat. lock says whether to
// take owner.lock meanwhile (it cannot be created on a read-only root).
func endHarness(s state.Seat, lock bool) error {
	sess, err := s.SessionFile().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if lock {
		// No driver now: take the lock so nothing else touches the pane meanwhile.
		l, err := Acquire(s)
		if errors.Is(err, state.ErrOwned) && WaitFree(s, stopLockWait) {
			// A driver recover started just before this stop took the lock
			// after the stop looked, read the stop, and is leaving
			// (driver.Run's intent check): its lock is free a moment later.
			l, err = Acquire(s)
		}
		if err != nil {
			return err
		}
		defer l.Release()
	}
	if sess.TmuxName == "" {
		return endStopped(s) // no tmux session: the seat ran on its app server
	}
	tm := tmux.New(sess.Socket)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tm.KillSession(ctx, sess.TmuxName); err != nil && !errors.Is(err, tmux.ErrNoServer) && !errors.Is(err, tmux.ErrNoTarget) {
		return fmt.Errorf("%w: kill tmux session %s: %v", state.ErrUnobservable, sess.TmuxName, err)
	}
	return endStopped(s)
}

// endStopped ends what is left of the seat's launches once its driver and tmux
// session are gone, and checks that no process of the launch outlives the
// stop: ErrSurvivors names each one still running (exit 1). By ancestry and
// the seat's markers (EndLaunch), not by the recorded pane pid's process
// group: that pid may have been recycled since, and a stranger's group must
// never be killed.
func endStopped(s state.Seat) error {
	_, err := proc.EndLaunch(s, proc.LaunchGrace)
	return err
}

// Retry re-queues a failed message: through the driver when one is live (it owns
// the inbox state), directly under the lock otherwise.
func Retry(s state.Seat, id string) error {
	if !guard.ValidID(id) {
		return fmt.Errorf("%w: bad message id %q", state.ErrBadInput, id)
	}
	if _, live, _ := s.LiveOwner(); live {
		_, err := s.Ask(state.Request{Kind: state.CtlRetry, MsgID: id}, 15*time.Second)
		return err
	}
	lock, err := Acquire(s)
	if err != nil {
		return err
	}
	defer lock.Release()
	if _, err := s.ReadStored(id); err != nil {
		return fmt.Errorf("%w: no message %q in seat %q", state.ErrBadInput, id, s.Name)
	}
	st, err := s.ReadStatus(id)
	if err != nil {
		return err
	}
	if err := RetryStatus(&st); err != nil {
		return err
	}
	return s.WriteStatus(st)
}

// RetryStatus is the one rule for re-queueing: only a failed message, and its
// resubmission mark is cleared so a lost turn may be resubmitted once again.
func RetryStatus(st *inbox.Status) error {
	if st.State != inbox.StateFailed {
		return fmt.Errorf("message %s is %s, not failed: only a failed message can be retried", st.ID, st.State)
	}
	st.State = inbox.StateQueued
	st.Retries++
	st.Resubmits, st.Transients = 0, 0
	st.Reason, st.Detail, st.TurnEnd = "", "retried by 'pantty seat retry'", ""
	st.PromptID, st.Evidence = "", ""
	st.Reply, st.ReplyBytes = "", 0 // the reply file is read only while reply_bytes names one
	return nil
}
