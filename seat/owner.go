package seat

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/state"
)

// Lock is the held owner.lock of a seat: while it exists, this process is the one
// driver allowed to write to the seat's pane and consume its inbox.
type Lock struct {
	fl    *flock.Flock
	Owner state.Owner
}

// NewHolderID makes the id a takeover must name: short, unguessable, printable.
func NewHolderID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return "h-" + hex.EncodeToString(b)
}

// Acquire takes owner.lock without waiting and records owner.toml. If another
// live process holds it, the error wraps ErrOwned and names that holder, after
// confirming it is live (a holder that just won a race is given a moment to
// write its record).
func Acquire(s state.Seat) (*Lock, error) {
	if err := s.Ensure(); err != nil {
		return nil, err
	}
	fl := flock.New(s.LockPath(), flock.SetPermissions(fsatomic.FileMode))
	ok, err := fl.TryLock()
	if err == nil && !ok {
		// A holder that was just killed can keep the lock a moment after its /proc
		// entry reads as a zombie (its other threads, which share the open files,
		// are still exiting). With no live owner recorded, give the kernel that
		// moment instead of refusing in favour of a dead process.
		if _, live, _ := s.LiveOwner(); !live && WaitFree(s, deadHolderWait) {
			ok, err = fl.TryLock()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("seat %q: lock %s: %w", s.Name, s.LockPath(), err)
	}
	if !ok {
		return nil, refusal(s)
	}
	start, err := procid.Start(os.Getpid())
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	host, _ := os.Hostname()
	o := state.Owner{Holder: NewHolderID(), PID: os.Getpid(), PIDStart: start, Host: host, Started: time.Now().UTC().Truncate(time.Second)}
	if err := s.OwnerFile().Write(o); err != nil {
		fl.Unlock()
		return nil, err
	}
	return &Lock{fl: fl, Owner: o}, nil
}

// deadHolderWait bounds how long Acquire waits for the lock of a holder that is
// no longer live to be released by the kernel.
const deadHolderWait = time.Second

// ownerRecordWait bounds how long a refused acquirer waits for the winner of a
// simultaneous start to write owner.toml before naming it.
const ownerRecordWait = 3 * time.Second

// refusal builds the ErrOwned error for a lock someone else holds. It polls
// owner.toml briefly: this path runs only when two starts race, the winner
// writes its record within milliseconds, and an fsnotify watch would cost more
// set-up than the wait itself.
func refusal(s state.Seat) error {
	deadline := time.Now().Add(ownerRecordWait)
	for {
		if o, live, err := s.LiveOwner(); err == nil && live {
			return fmt.Errorf("%w: seat %q is held by %s", state.ErrOwned, s.Name, o)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid := lockHolderPID(s.LockPath()); pid > 0 {
		return fmt.Errorf("%w: seat %q is locked by pid %d (no owner record names it)", state.ErrOwned, s.Name, pid)
	}
	return fmt.Errorf("%w: seat %q is locked by an unknown process", state.ErrOwned, s.Name)
}

// Release drops the lock (the owner.toml record stays: it names the last holder,
// and a dead holder is judged by its pid and start time).
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	return l.fl.Unlock()
}

// WaitFree blocks until no process holds the seat's lock or the timeout passes.
// Used after asking a holder to leave (takeover, stop): the kernel releases the
// flock the moment the holder exits. It reads /proc/locks rather than trying the
// lock, so waiting never makes a concurrent start fail.
func WaitFree(s state.Seat, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if lockHolderPID(s.LockPath()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		// Bounded poll: neither flock nor /proc/locks offers a notification,
		// and this runs only while a holder is being asked to leave.
		time.Sleep(20 * time.Millisecond)
	}
}

// lockHolderPID reads /proc/locks for the pid holding an flock on path's inode.
func lockHolderPID(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := ":" + strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
		if len(fields) >= 6 && fields[1] == "FLOCK" && strings.HasSuffix(fields[5], want) {
			if pid, err := strconv.Atoi(fields[4]); err == nil {
				return pid
			}
		}
	}
	return 0
}
