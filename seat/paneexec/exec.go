package paneexec

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"golang.org/x/sys/unix"
)

// Run is the pane's first process (`pantty __exec LAUNCH.toml`). It starts
// the harness with exactly the recorded environment plus the terminal variables
// tmux set for this pane (TERM, COLORTERM), and stays as the harness's parent for
// one reason: the seat's boundary. It is a child subreaper (PR_SET_CHILD_SUBREAPER),
// so a process the harness starts keeps the pane process as an ancestor even when
// it detaches with setsid or a double fork (measured: without it such a child is
// reparented to pid 1 and leaves the seat's tree; docs/intake.md). InsideSeat walks that
// ancestry, so the refusal no longer depends on an environment marker the model's
// shell can drop.
//
// The contract it keeps with the rest of pantty (docs/architecture.md):
//   - the pane pid is this process; it lives exactly as long as the harness and
//     then exits with the harness's status (or dies of the same signal), so the
//     driver's pidfd watch, pane_dead_status and adoption by pane pid read as before;
//   - the harness is in the pane's process group (the terminal's foreground group),
//     so KillGroup(pane pid) still ends both, and terminal signals (SIGINT, SIGQUIT,
//     SIGTSTP, SIGWINCH) reach the harness from the kernel: this process drops its
//     copy instead of sending a second one (a second Ctrl-C makes Claude Code exit);
//   - SIGUSR1 and SIGUSR2 sent to the pane pid are forwarded; SIGHUP and SIGTERM
//     end the whole tree (the harness gets the signal, the rest SIGTERM, and
//     what runs proc.LaunchGrace later is killed: superviseHarness);
//   - the harness gets PR_SET_PDEATHSIG SIGKILL, so a SIGKILL to the pane pid still
//     ends the harness (no harness runs on in a pane tmux reports dead);
//   - orphans it adopts are reaped as they exit (pid 1 does not reap here, §10), and
//     when the harness has exited, what is left of its tree is killed (SIGKILL) and
//     reaped before this process exits: a seat's processes do not outlive its harness.
func Run(launchPath string) error {
	lf, err := state.LaunchFileAt(launchPath).Read()
	if err != nil {
		return err
	}
	if len(lf.Argv) == 0 {
		return fmt.Errorf("%s: argv is empty", launchPath)
	}
	env := map[string]string{}
	for k, v := range lf.Env {
		env[k] = v
	}
	for _, k := range []string{"TERM", "COLORTERM"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if lf.Dir != "" {
		if err := os.Chdir(lf.Dir); err != nil {
			return err
		}
	}
	bin := lf.Argv[0]
	if !strings.Contains(bin, "/") {
		os.Setenv("PATH", env["PATH"])
		p, err := exec.LookPath(bin)
		if err != nil {
			return fmt.Errorf("harness binary %q: %v", bin, err)
		}
		bin = p
	}
	door, err := openDoor(lf)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set child subreaper: %v", err)
	}
	// Pdeathsig fires when the thread that forked the child exits, not the
	// process: keep this goroutine on its thread for the process's life.
	runtime.LockOSThread()
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGHUP, unix.SIGUSR1, unix.SIGUSR2,
		unix.SIGINT, unix.SIGQUIT, unix.SIGTSTP, unix.SIGWINCH)
	proc, err := os.StartProcess(bin, lf.Argv, &os.ProcAttr{
		Env:   state.EnvList(env),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return fmt.Errorf("start harness %q: %v", bin, err)
	}
	harness := proc.Pid
	if door != nil {
		if err := startDoor(launchPath, door, env); err != nil {
			fmt.Fprintf(os.Stderr, "pantty: hook door: %v (the jailed harness's hooks record nothing)\n", err)
		}
		door.Close()
	}
	status := superviseHarness(harness, sigs)
	killRemaining()
	exitLike(status)
	return nil
}

// superviseHarness forwards the signals meant for the harness and reaps every
// child (the harness and adopted orphans) until the harness has exited; it returns
// the harness's wait status. Reaping is wait4(-1), so os.Process.Wait is never used.
//
// SIGHUP (the pane's terminal hung up: its tmux server or session went away)
// and SIGTERM (a supervisor ends the pane) end the whole seat, not only the
// harness: the signal goes to the harness, SIGTERM to every other process
// below this one, and whatever still runs proc.LaunchGrace later is killed.
// Forwarding to the harness alone was not enough (measured on Gemini CLI
// 0.61.0: its outer node ignores SIGHUP and SIGTERM, so after a tmux
// kill-server the pane process and both nodes ran on beside the driver's
// relaunch on the same session; a SIGTERM to the inner node ended all three).
func superviseHarness(harness int, sigs <-chan os.Signal) unix.WaitStatus {
	var grace <-chan time.Time
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
			if pid == harness {
				return ws
			}
		}
		select {
		case sig := <-sigs:
			switch sig {
			case unix.SIGTERM, unix.SIGHUP:
				unix.Kill(harness, sig.(syscall.Signal))
				if grace == nil {
					signalTree(harness, unix.SIGTERM)
					grace = time.After(proc.LaunchGrace)
				}
			case unix.SIGUSR1, unix.SIGUSR2:
				unix.Kill(harness, sig.(syscall.Signal))
			}
		case <-grace:
			// Still running after the grace: kill the tree; the harness's
			// end is reaped above, and killRemaining takes the rest.
			unix.Kill(harness, unix.SIGKILL)
			signalTree(harness, unix.SIGKILL)
		}
	}
}

// signalTree sends sig to every process below this one except the harness
// (which got its own signal).
func signalTree(harness int, sig unix.Signal) {
	for _, pid := range proc.Descendants(os.Getpid()) {
		if pid != harness {
			unix.Kill(pid, sig)
		}
	}
}

// killRemaining ends what is left of the seat's tree after the harness exited:
// every process still below this subreaper. A killed child's own children are
// reparented here, so it repeats until no child is left.
func killRemaining() {
	self := os.Getpid()
	for {
		kids := proc.ChildrenOf(self)
		for _, pid := range kids {
			unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ECHILD || (pid <= 0 && len(kids) == 0) {
			return
		}
	}
}

// exitLike ends this process the way the harness ended: the same exit code, or
// the same terminating signal (tmux's pane_dead_status and pane_dead_signal, and
// recover's reasons, then read as they did when the pane pid was the harness).
func exitLike(ws unix.WaitStatus) {
	if ws.Signaled() {
		sig := ws.Signal()
		switch sig {
		case unix.SIGHUP, unix.SIGINT, unix.SIGTERM, unix.SIGKILL, unix.SIGUSR1, unix.SIGUSR2, unix.SIGPIPE, unix.SIGALRM:
			signal.Reset(sig)
			unix.Kill(os.Getpid(), sig)
			// The signal reaches some thread of this process, not at once:
			// the runtime's default action (die by it) must get the time to
			// run before the fallback exit below, which under load won the
			// race (exit 143 instead of SIGTERM, once in a full test run).
			// Dying ends the wait; it is never reached otherwise.
			time.Sleep(2 * time.Second)
		}
		os.Exit(128 + int(sig))
	}
	os.Exit(ws.ExitStatus())
}
