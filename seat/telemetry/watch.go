package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat/state"
)

// Timers of Watch (docs/telemetry.md lists them with their reasons).
const (
	// DefaultSettle is the quiet time that coalesces a burst of writes into one
	// reading (a turn end rewrites status, cursor, context and heartbeat within
	// milliseconds): latest wins, one line.
	DefaultSettle = 100 * time.Millisecond
	// maxCoalesce bounds how long a continuous burst can hold a reading back.
	maxCoalesce = time.Second
	// staleSlack is added to a heartbeat's stale deadline so the reading taken
	// when the timer fires is past it (Stale is strictly "older than").
	staleSlack = 10 * time.Millisecond
)

// WatchOptions tunes Watch.
type WatchOptions struct {
	Seat   string           // one seat; "" = every seat, including seats that appear while watching
	Reader Reader           // recover source for the readings
	Now    func() time.Time // clock for readings; nil = time.Now
	Settle time.Duration    // coalescing quiet time; 0 = DefaultSettle
}

// Change is one line of watch output: what changed in one seat's readings.
type Change struct {
	Version int       `json:"version"`
	At      time.Time `json:"at"`
	Seat    string    `json:"seat"`
	// Initial marks the first reading of a seat (at start, or when it appears):
	// Fields then holds every watched field with an empty From.
	Initial bool `json:"initial"`
	// Removed marks a seat whose seat.toml disappeared; Row is null.
	Removed bool          `json:"removed"`
	Fields  []FieldChange `json:"changes"`
	Row     *Row          `json:"row"`
}

// FieldChange is one watched field's old and new value, in the words status uses.
type FieldChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// WatchedFields are the fields whose change makes a line, in line order.
var WatchedFields = []string{"health", "phase", "context", "inbox", "cursor", "model", "session"}

// Keys returns the row's watched fields as comparable words. They carry no ages
// and context only in 5 % steps of its window, so a rewrite that changed
// nothing, a heartbeat tick and a sub-step context move all compare equal.
func (r Row) Keys() map[string]string {
	k := map[string]string{}
	switch h := r.Health; {
	case h.IsKnown() && h.Verdict != nil && h.State == Stale:
		k["health"] = "stale " + *h.Verdict
	case h.IsKnown() && h.Verdict != nil:
		k["health"] = r.healthCell().Text
	case h.State == Error:
		k["health"] = "error"
	default:
		k["health"] = r.healthCell().Text // derived from the live records until recover judges
	}
	switch h := r.Heartbeat; {
	case h.IsKnown() && h.Phase != nil:
		p := h.PhaseText()
		if h.State == Stale {
			p = "stale (last: " + p + ")"
		}
		k["phase"] = p
	default:
		k["phase"] = off(h.Meta).Text
	}
	switch c := r.Context; {
	case c.IsKnown() && c.Step != nil:
		k["context"] = fmt.Sprintf("%d%% of %d", *c.Step, *c.Window)
	case c.IsKnown():
		k["context"] = "? (no window)"
	default:
		k["context"] = off(c.Meta).Text
	}
	if in := r.Inbox; in.IsKnown() && in.Depth != nil {
		k["inbox"] = fmt.Sprint(*in.Depth)
	} else {
		k["inbox"] = off(in.Meta).Text
	}
	if c := r.Cursor; c.IsKnown() && c.ID != nil {
		k["cursor"] = fmt.Sprintf("%s (%d closed)", *c.ID, *c.Closed)
	} else {
		k["cursor"] = off(c.Meta).Text
	}
	k["model"] = textCell(r.Model).Text
	if s := r.Session; s.IsKnown() && s.ID != nil {
		k["session"] = *s.ID
	} else {
		k["session"] = off(s.Meta).Text
	}
	return k
}

// Watch follows the state directories and calls emit with a Change for each
// meaningful change, until ctx ends (then it returns nil). It watches first and
// scans second, so a file written in between is not missed; rescans everything
// on an fsnotify overflow; picks up seats created while it runs; and coalesces
// a burst of writes into one reading (latest wins). It reads files only.
func Watch(ctx context.Context, home string, opt WatchOptions, emit func(Change)) error {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Settle <= 0 {
		opt.Settle = DefaultSettle
	}
	if opt.Seat != "" {
		if _, err := state.Existing(home, opt.Seat); err != nil {
			return err
		}
	}
	if _, err := os.Stat(home); err != nil {
		return fmt.Errorf("%w: state root %s: %v", state.ErrUnobservable, home, err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	w := &watcher{home: home, seats: filepath.Join(home, "seats"), opt: opt, fw: fw, emit: emit,
		last: map[string]map[string]string{}, dirty: map[string]bool{}, deadline: map[string]time.Time{}}
	// Watch first, then scan: a file created between the two is seen by the scan.
	w.addAll()
	w.markAll()
	w.flush()

	settle := time.NewTimer(time.Hour)
	settle.Stop()
	stale := time.NewTimer(time.Hour)
	w.armStale(stale)
	var firstDirty time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if !w.onEvent(ev) {
				continue
			}
			now := opt.Now()
			if firstDirty.IsZero() {
				firstDirty = now
			}
			wait := opt.Settle
			if cap := firstDirty.Add(maxCoalesce).Sub(now); cap < wait {
				wait = max(cap, 0)
			}
			settle.Reset(wait)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: re-add every directory and re-read every seat.
				w.addAll()
				w.markAll()
				w.flush()
				w.armStale(stale)
				firstDirty = time.Time{}
			}
		case <-settle.C:
			firstDirty = time.Time{}
			w.flush()
			w.armStale(stale)
		case <-stale.C:
			now := w.opt.Now()
			for name, d := range w.deadline {
				if !now.Before(d) {
					w.dirty[name] = true
				}
			}
			w.flush()
			w.armStale(stale)
		}
	}
}

type watcher struct {
	home, seats string
	opt         WatchOptions
	fw          *fsnotify.Watcher
	emit        func(Change)
	last        map[string]map[string]string // seat → last emitted keys
	dirty       map[string]bool
	deadline    map[string]time.Time // seat → when its fresh heartbeat turns stale
}

// seatDirs are the directories whose files feed the watched fields.
func seatDirs(s state.Seat) []string {
	return append([]string{s.Dir, filepath.Join(s.Dir, "inbox"), s.MsgsDir(),
		s.EventsDir(), s.SeenDir(), s.HandoffDir()}, s.StatusDirs()...)
}

// addAll watches the state root, seats/ and every (or the one) seat's directories.
func (w *watcher) addAll() {
	w.fw.Add(w.home)
	w.fw.Add(w.seats)
	if w.opt.Seat != "" {
		w.addSeat(w.opt.Seat)
		return
	}
	ents, _ := os.ReadDir(w.seats)
	for _, e := range ents {
		if e.IsDir() && state.ValidateName(e.Name()) == nil {
			w.addSeat(e.Name())
		}
	}
}

// addSeat watches whichever of a seat's directories exist; adding one already
// watched is harmless, so this runs again whenever a directory appears.
func (w *watcher) addSeat(name string) {
	s, err := state.Open(w.home, name)
	if err != nil {
		return
	}
	for _, d := range seatDirs(s) {
		w.fw.Add(d) // a directory that does not exist yet is added when it appears
	}
}

// markAll marks every seat (or the one) for a reading, and any seat last seen
// but now gone, so its removal is reported.
func (w *watcher) markAll() {
	if w.opt.Seat != "" {
		w.dirty[w.opt.Seat] = true
		return
	}
	ents, _ := os.ReadDir(w.seats)
	for _, e := range ents {
		if e.IsDir() && state.ValidateName(e.Name()) == nil {
			w.dirty[e.Name()] = true
		}
	}
	for name := range w.last {
		w.dirty[name] = true
	}
}

// onEvent maps a file event to the seat it concerns and marks it for a
// reading; it reports whether anything was marked.
func (w *watcher) onEvent(ev fsnotify.Event) bool {
	if ev.Name == w.seats {
		if ev.Op&fsnotify.Create != 0 {
			w.addAll()
			w.markAll()
			return true
		}
		return false
	}
	rel, err := filepath.Rel(w.seats, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		// In the state root itself: providers.toml and recover-last.toml concern every seat.
		if ev.Name == state.ProvidersPath(w.home) || filepath.Base(ev.Name) == LastSweepFile {
			w.markAll()
			return true
		}
		return false
	}
	name, _, _ := strings.Cut(rel, string(filepath.Separator))
	if state.ValidateName(name) != nil || (w.opt.Seat != "" && name != w.opt.Seat) {
		return false
	}
	// driver.log grows with every line the driver logs and feeds no reading;
	// a bare permission change rewrites nothing.
	if filepath.Base(ev.Name) == "driver.log" || ev.Op == fsnotify.Chmod {
		return false
	}
	if ev.Op&(fsnotify.Create|fsnotify.Rename) != 0 {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			w.addSeat(name) // a seat or one of its directories appeared
		}
	}
	w.dirty[name] = true
	return true
}

// flush reads every marked seat and emits a Change for each whose watched
// fields differ from the last line printed for it.
func (w *watcher) flush() {
	names := make([]string, 0, len(w.dirty))
	for n := range w.dirty {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		delete(w.dirty, name)
		now := w.opt.Now()
		row, err := w.opt.Reader.ReadSeat(w.home, name, now)
		prev, seen := w.last[name]
		if err != nil {
			if seen && errors.Is(err, state.ErrUnknownSeat) {
				delete(w.last, name)
				delete(w.deadline, name)
				w.emit(Change{Version: Version, At: now.UTC(), Seat: name, Removed: true})
			}
			continue
		}
		keys := row.Keys()
		w.last[name] = keys
		w.noteDeadline(name, row)
		c := Change{Version: Version, At: now.UTC(), Seat: name, Initial: !seen, Row: &row}
		for _, f := range WatchedFields {
			if !seen || prev[f] != keys[f] {
				c.Fields = append(c.Fields, FieldChange{Field: f, From: prev[f], To: keys[f]})
			}
		}
		if len(c.Fields) > 0 {
			w.emit(c)
		}
	}
}

// noteDeadline records when a fresh heartbeat will turn stale: that change
// makes no file event, so a timer stands in for it.
func (w *watcher) noteDeadline(name string, r Row) {
	h := r.Heartbeat
	if h.State != Known || h.At == nil || h.IntervalSeconds == nil {
		delete(w.deadline, name)
		return
	}
	iv := time.Duration(*h.IntervalSeconds * float64(time.Second))
	w.deadline[name] = h.At.Add(2*iv + staleSlack)
}

// armStale sets the timer to the earliest heartbeat deadline.
func (w *watcher) armStale(t *time.Timer) {
	t.Stop()
	var first time.Time
	for _, d := range w.deadline {
		if first.IsZero() || d.Before(first) {
			first = d
		}
	}
	if first.IsZero() {
		return
	}
	t.Reset(max(first.Sub(w.opt.Now()), 0))
}

// FormatChange renders a Change as one line of text.
func FormatChange(c Change) string {
	var b strings.Builder
	b.WriteString(c.At.Format(time.RFC3339))
	b.WriteString(" ")
	b.WriteString(c.Seat)
	switch {
	case c.Removed:
		b.WriteString(": removed (no seat.toml)")
	case c.Initial:
		b.WriteString(": now")
		for i, f := range c.Fields {
			if i > 0 {
				b.WriteString(" ·")
			}
			fmt.Fprintf(&b, " %s %s", f.Field, f.To)
		}
	default:
		b.WriteString(":")
		for i, f := range c.Fields {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " %s %s → %s", f.Field, f.From, f.To)
		}
	}
	return b.String()
}
