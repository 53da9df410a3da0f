package main

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// untilOutputClosed returns a context that ends when the reader of f goes away
// (`pantty watch | head -3`, a bridge that died). A follower writes only on a
// change, so a write's EPIPE may come hours late; poll(2) reports POLLERR on a
// pipe's write end as soon as its read end is closed, and a blocking poll with
// no timeout costs nothing meanwhile. For a terminal or a file nothing is
// reported and the context lives on.
func untilOutputClosed(parent context.Context, f *os.File) context.Context {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return parent
	}
	ctx, cancel := context.WithCancel(parent)
	go func() {
		defer cancel()
		fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: 0}}
		for ctx.Err() == nil {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				return
			}
		}
	}()
	return ctx
}
