package driver

import (
	"os"

	"golang.org/x/sys/unix"
)

// procWatch tells, without polling, when one process exits: it waits on a
// pidfd (Linux), which becomes readable when the process terminates, whoever
// its parent is. The driver watches the harness this way because tmux 3.3a can
// lose a pane's SIGCHLD, and then neither the pane's dead flag nor the
// pane-died hook says anything until some other child of the server exits.
type procWatch struct {
	exited chan int
	stopW  *os.File
}

// watchProcess starts watching pid; ok=false when pidfds are not available
// (then the heartbeat check remains the safety net).
func watchProcess(pid int) (*procWatch, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, false
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(fd)
		return nil, false
	}
	pw := &procWatch{exited: make(chan int, 1), stopW: w}
	go func() {
		defer unix.Close(fd)
		defer r.Close()
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && fds[0].Revents != 0 {
				pw.exited <- pid
			}
			return
		}
	}()
	return pw, true
}

// stop ends the watch (the process may live on).
func (p *procWatch) stop() {
	if p != nil {
		p.stopW.Close()
	}
}

// done is the channel that receives the pid when the process exits.
func (p *procWatch) done() <-chan int {
	if p == nil {
		return nil
	}
	return p.exited
}
