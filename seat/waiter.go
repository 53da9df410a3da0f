package seat

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// Outcome is what a Waiter learned about one message: its status when it
// became final, or why the wait ended without that.
type Outcome struct {
	ID       string
	Status   inbox.Status // the last status read (queued when there is no status file yet)
	TimedOut bool         // the deadline passed first; the message stays where it is
	Err      error        // the status could not be read, or the message is gone: unknown
}

// Waiter follows messages of one seat to a final state on fsnotify events from
// inbox/status, never by polling: the board door's `send --wait` blocks on it
// while the driver works. It watches first and reads after, so a status written
// in between is not missed, and rereads everything it follows when the kernel
// reports an overflow. Only the driver writes statuses; a Waiter writes nothing.
type Waiter struct {
	s    state.Seat
	w    *fsnotify.Watcher
	add  chan waitReq
	out  chan Outcome
	done chan struct{}
}

type waitReq struct {
	id       string
	deadline time.Time // zero: no limit
}

// NewWaiter starts watching the seat's inbox. Close it when done.
func NewWaiter(s state.Seat) (*Waiter, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("seat %q: watch inbox: %w", s.Name, err)
	}
	// inbox/ too: a seat that never ran a message may have no status directory
	// yet; its creation is seen there and the directory added.
	for _, d := range append([]string{filepath.Dir(s.StatusDir())}, s.StatusDirs()...) {
		if err := w.Add(d); err != nil && d == filepath.Dir(s.StatusDir()) {
			w.Close()
			return nil, fmt.Errorf("%w: seat %q: watch %s: %v", state.ErrUnobservable, s.Name, d, err)
		}
	}
	wt := &Waiter{s: s, w: w, add: make(chan waitReq), out: make(chan Outcome, 64), done: make(chan struct{})}
	go wt.loop()
	return wt, nil
}

// Add follows id until it is final or the deadline (zero: none) passes; its
// Outcome arrives on Outcomes exactly once.
func (wt *Waiter) Add(id string, deadline time.Time) {
	select {
	case wt.add <- waitReq{id, deadline}:
	case <-wt.done:
	}
}

// Outcomes delivers one Outcome per id added, in the order they settle.
func (wt *Waiter) Outcomes() <-chan Outcome { return wt.out }

// Close stops the watch; outcomes not delivered yet are dropped.
func (wt *Waiter) Close() {
	select {
	case <-wt.done:
	default:
		close(wt.done)
	}
	wt.w.Close()
}

func (wt *Waiter) loop() {
	pending := map[string]time.Time{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	// settle reads id's status and delivers its outcome when there is one.
	settle := func(id string, now time.Time) {
		st, err := wt.s.ReadStatus(id)
		var o *Outcome
		switch {
		case err != nil:
			o = &Outcome{ID: id, Err: fmt.Errorf("%w: %v", state.ErrUnobservable, err)}
		case inbox.Final(st.State):
			o = &Outcome{ID: id, Status: st}
		case st.State == inbox.StateQueued && !wt.stored(id):
			o = &Outcome{ID: id, Status: st, Err: fmt.Errorf("%w: message %s is not in seat %q's inbox (removed?)", state.ErrUnobservable, id, wt.s.Name)}
		case !pending[id].IsZero() && !now.Before(pending[id]):
			o = &Outcome{ID: id, Status: st, TimedOut: true}
		}
		if o == nil {
			return
		}
		delete(pending, id)
		select {
		case wt.out <- *o:
		case <-wt.done:
		}
	}
	rearm := func() {
		timer.Stop()
		var first time.Time
		for _, d := range pending {
			if !d.IsZero() && (first.IsZero() || d.Before(first)) {
				first = d
			}
		}
		if !first.IsZero() {
			timer.Reset(time.Until(first))
		}
	}
	all := func() {
		now := time.Now()
		for id := range pending {
			settle(id, now)
		}
		rearm()
	}
	for {
		select {
		case <-wt.done:
			return
		case r := <-wt.add:
			pending[r.id] = r.deadline
			settle(r.id, time.Now())
			rearm()
		case ev, ok := <-wt.w.Events:
			if !ok {
				return
			}
			if slices.Contains(wt.s.StatusDirs(), ev.Name) && ev.Has(fsnotify.Create) {
				wt.w.Add(ev.Name)
				all()
				continue
			}
			id, isStatus := strings.CutSuffix(filepath.Base(ev.Name), ".toml")
			if _, ok := pending[id]; ok && isStatus && slices.Contains(wt.s.StatusDirs(), filepath.Dir(ev.Name)) {
				settle(id, time.Now())
				rearm()
			}
		case err, ok := <-wt.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				all() // events were lost: read every followed status again
			}
		case <-timer.C:
			all()
		}
	}
}

// stored reports whether the message file is still in the inbox.
func (wt *Waiter) stored(id string) bool {
	_, err := state.ReadRegular(wt.s.MsgPath(id))
	return err == nil
}
