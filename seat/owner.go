package seat

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/pantty/pantty/internal/fsatomic"
)

// Owner is owner.toml: who holds owner.lock. Readers judge the holder live from
// the pid AND its start time (never by taking the lock themselves, which would
// make a concurrent start fail).
type Owner struct {
	Holder   string    `toml:"holder"`    // the id a --takeover must name
	PID      int       `toml:"pid"`       // the driver process
	PIDStart uint64    `toml:"pid_start"` // its start time in clock ticks (/proc/PID/stat)
	Host     string    `toml:"host"`
	Started  time.Time `toml:"started"`
}

// String names the holder the way refusals print it.
func (o Owner) String() string {
	return fmt.Sprintf("holder %s (pid %d on %s since %s)", o.Holder, o.PID, o.Host, o.Started.Format(time.RFC3339))
}

// Live reports whether the recorded holder process still exists as recorded.
func (o Owner) Live() bool {
	host, _ := os.Hostname()
	return o.PID > 0 && o.Host == host && ProcAlive(o.PID, o.PIDStart)
}

// LiveOwner returns the recorded holder if it is live. It never touches the lock.
func (s Seat) LiveOwner() (Owner, bool, error) {
	o, err := s.OwnerFile().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return o, false, nil
	}
	if err != nil {
		return o, false, err
	}
	return o, o.Live(), nil
}

// Lock is the held owner.lock of a seat: while it exists, this process is the one
// driver allowed to write to the seat's pane and consume its inbox.
type Lock struct {
	fl    *flock.Flock
	Owner Owner
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
func (s Seat) Acquire() (*Lock, error) {
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
		if _, live, _ := s.LiveOwner(); !live && s.WaitFree(deadHolderWait) {
			ok, err = fl.TryLock()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("seat %q: lock %s: %w", s.Name, s.LockPath(), err)
	}
	if !ok {
		return nil, s.refusal()
	}
	start, err := ProcStart(os.Getpid())
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	host, _ := os.Hostname()
	o := Owner{Holder: NewHolderID(), PID: os.Getpid(), PIDStart: start, Host: host, Started: time.Now().UTC().Truncate(time.Second)}
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
func (s Seat) refusal() error {
	deadline := time.Now().Add(ownerRecordWait)
	for {
		if o, live, err := s.LiveOwner(); err == nil && live {
			return fmt.Errorf("%w: seat %q is held by %s", ErrOwned, s.Name, o)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if pid := lockHolderPID(s.LockPath()); pid > 0 {
		return fmt.Errorf("%w: seat %q is locked by pid %d (no owner record names it)", ErrOwned, s.Name, pid)
	}
	return fmt.Errorf("%w: seat %q is locked by an unknown process", ErrOwned, s.Name)
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
func (s Seat) WaitFree(timeout time.Duration) bool {
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
