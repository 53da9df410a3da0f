package feed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// DefaultSettle is how long an event is held before it is printed. An event's
// time is taken when it happens and its record becomes visible a little later
// (the write, its fsyncs, the rename), so two seats — or two senders — can make
// an earlier event visible after a later one. Holding every event until its
// time is this old and printing in (time, key) order makes the cursor exact:
// nothing printed later can sort before a cursor already handed out, as long as
// a record lands within the settle time (measured lags are milliseconds).
const DefaultSettle = 2 * time.Second

// lateWindow is how long printed cursors are remembered to recognise a late
// event (one visible only after the settle time) instead of dropping it.
const lateWindow = 10 * time.Minute

// Options tunes Run.
type Options struct {
	Seat   string        // one seat; "" = every seat, including seats that appear while following
	Since  Cursor        // print only events after it (zero: from the oldest record)
	Follow bool          // keep following on fsnotify events until ctx ends
	Settle time.Duration // hold time (0: none; `pantty events` defaults to DefaultSettle)
	// Now is the clock an event's settle time and lateness are judged on;
	// nil is the wall clock.
	Now func() time.Time
}

// Run prints the events of the state root's seats through emit: first a health
// snapshot line per seat that has a verdict, then every event after the cursor
// in (time, key) order once settled; with Follow it goes on with each new event
// and each health change, reading the records again only on fsnotify events
// (watch first, then scan; everything again on an overflow). Without Follow it
// returns once the settled events are printed (younger ones wait for the next
// run, which resumes from the last cursor). An emit error ends it (a closed pipe).
func Run(ctx context.Context, home string, opt Options, emit func(Event) error) error {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Settle < 0 {
		return fmt.Errorf("%w: settle %s is negative", state.ErrBadInput, opt.Settle)
	}
	if opt.Seat != "" {
		if _, err := state.Existing(home, opt.Seat); err != nil {
			return err
		}
	}
	if _, err := os.Stat(home); err != nil {
		return fmt.Errorf("%w: state root %s: %v", state.ErrUnobservable, home, err)
	}
	f := &follower{home: home, seats: filepath.Join(home, "seats"), opt: opt, emit: emit, cursor: opt.Since,
		pending: map[string]Event{}, printed: map[string]time.Time{}, health: map[string]string{}}
	if opt.Follow {
		fw, err := fsnotify.NewWatcher()
		if err != nil {
			return err
		}
		defer fw.Close()
		f.fw = fw
		f.watchAll()
	}
	if err := f.scanAll(true); err != nil {
		return err
	}
	if !opt.Follow {
		return f.flush(f.opt.Now())
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if err := f.flush(f.opt.Now()); err != nil {
			return err
		}
		f.arm(timer)
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-f.fw.Events:
			if !ok {
				return nil
			}
			if err := f.onEvent(ev); err != nil {
				return err
			}
		case err, ok := <-f.fw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				f.watchAll()
				if err := f.scanAll(false); err != nil {
					return err
				}
			}
		case <-timer.C:
		}
	}
}

type follower struct {
	home, seats string
	opt         Options
	fw          *fsnotify.Watcher
	emit        func(Event) error
	cursor      Cursor
	pending     map[string]Event     // cursor string → event waiting for its settle time
	printed     map[string]time.Time // cursor strings printed within lateWindow
	health      map[string]string    // seat → last health line's verdict/cause
}

func (f *follower) seatNames() []string {
	if f.opt.Seat != "" {
		return []string{f.opt.Seat}
	}
	names, _ := state.List(f.home)
	return names
}

// watchAll watches seats/ and every (or the one) seat's record directories.
func (f *follower) watchAll() {
	f.fw.Add(f.seats)
	for _, n := range f.seatNames() {
		f.watchSeat(n)
	}
}

func (f *follower) watchSeat(name string) {
	s, err := state.Open(f.home, name)
	if err != nil {
		return
	}
	for _, d := range append([]string{s.Dir, filepath.Join(s.Dir, "inbox"), s.MsgsDir()}, s.StatusDirs()...) {
		f.fw.Add(d) // one that does not exist yet is added when it appears
	}
}

// scanAll derives every seat's events; at start (first) it also prints the
// health snapshot lines.
func (f *follower) scanAll(first bool) error {
	for _, n := range f.seatNames() {
		s, err := state.Open(f.home, n)
		if err != nil {
			continue
		}
		if err := f.checkHealth(s, first); err != nil {
			return err
		}
		es, err := SeatScan(s)
		if err != nil {
			return err
		}
		for _, e := range es {
			f.offer(e)
		}
	}
	return nil
}

// offer queues an event derived from the records unless it was printed or
// lies before the cursor; one that lies before the cursor but after the
// starting point and was never printed is late: printed at once, marked.
func (f *follower) offer(e Event) {
	c := cursorOf(e)
	k := c.String()
	if _, done := f.printed[k]; done {
		return
	}
	if f.cursor.After(e) {
		f.pending[k] = e
		return
	}
	if f.opt.Since.After(e) && e.At.After(f.opt.Now().Add(-lateWindow)) {
		e.Late = true
		f.pending[k] = e
	}
}

// flush prints, in stream order, every pending event whose settle time has
// passed (late ones at once).
func (f *follower) flush(now time.Time) error {
	var ready []Event
	for _, e := range f.pending {
		if e.Late || !e.At.Add(f.opt.Settle).After(now) {
			ready = append(ready, e)
		}
	}
	Sort(ready)
	for _, e := range ready {
		c := cursorOf(e)
		delete(f.pending, c.String())
		if !e.Late {
			f.cursor = c
		}
		e.Cursor = c.String()
		f.printed[e.Cursor] = e.At
		if err := f.emit(e); err != nil {
			return err
		}
	}
	for k, at := range f.printed {
		if at.Before(now.Add(-lateWindow)) {
			delete(f.printed, k)
		}
	}
	return nil
}

// arm sets the timer for the earliest pending event's settle time.
func (f *follower) arm(t *time.Timer) {
	t.Stop()
	var first time.Time
	for _, e := range f.pending {
		if first.IsZero() || e.At.Before(first) {
			first = e.At
		}
	}
	if !first.IsZero() {
		t.Reset(first.Add(f.opt.Settle).Sub(f.opt.Now()))
	}
}

// checkHealth prints a health line when the verdict or its cause changed (or,
// at start, the current one as a snapshot).
func (f *follower) checkHealth(s state.Seat, snapshot bool) error {
	e, ok, err := Health(s)
	if err != nil || !ok {
		return nil // an unreadable verdict is left to status; the stream goes on
	}
	k := healthKey(e)
	if prev, seen := f.health[s.Name]; seen && prev == k {
		return nil
	}
	f.health[s.Name] = k
	e.Snapshot = snapshot
	return f.emit(e)
}

// onEvent re-derives what a file event concerns: one message, a seat's mode,
// intent or health, or a seat that appeared.
func (f *follower) onEvent(ev fsnotify.Event) error {
	if ev.Has(fsnotify.Chmod) && ev.Op == fsnotify.Chmod {
		return nil
	}
	rel, err := filepath.Rel(f.seats, ev.Name)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	name := parts[0]
	if state.ValidateName(name) != nil || (f.opt.Seat != "" && name != f.opt.Seat) {
		return nil
	}
	s, err := state.Open(f.home, name)
	if err != nil {
		return nil
	}
	if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
		// A seat or one of its inbox directories appeared: watch it, then read it
		// whole (files may have landed before the watch).
		f.watchSeat(name)
		es, err := SeatScan(s)
		if err != nil {
			return err
		}
		for _, e := range es {
			f.offer(e)
		}
		return nil
	}
	switch {
	case len(parts) == 2 && (parts[1] == "mode.toml" || parts[1] == "intent.toml"):
		for _, e := range SeatEvents(s) {
			f.offer(e)
		}
	case len(parts) == 2 && parts[1] == "health.toml":
		return f.checkHealth(s, false)
	case len(parts) == 4 && parts[1] == "inbox" && slices.Contains([]string{"msgs", "status", "processed", "failed"}, parts[2]):
		id := strings.TrimSuffix(strings.TrimSuffix(parts[3], ".json"), ".toml")
		if !guard.ValidID(id) {
			return nil
		}
		m, err := s.ReadStored(id)
		if err != nil {
			return nil // pruned, or not a message file
		}
		st, err := s.ReadStatus(id)
		if err != nil {
			return nil
		}
		for _, e := range MessageEvents(s, m, st) {
			f.offer(e)
		}
	}
	return nil
}
