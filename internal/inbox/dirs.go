package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
)

// The inbox keeps a message's state the way a maildir does: the directory its
// status file is in is its state, so a reader learns which messages are open
// and how many are done from directory listings alone and decodes only what
// is still open. Thirty days of history cost a listing, not a decode per
// message (docs/state.md, "The inbox").
//
//	inbox/msgs/<id>.json        every accepted message, written once: the id registry
//	inbox/status/<id>.toml      an open message's status (queued with history, submitting, submitted)
//	inbox/processed/<id>.toml   the final status of a processed message
//	inbox/failed/<id>.toml      the final status of a failed message
//
// A message with no status file anywhere is queued. A status moves by writing
// it in its new directory and then removing it from the old one; a crash
// between the two leaves two copies, and the one written last (updated_at)
// wins. An inbox an older pantty wrote (every status in status/, and
// inbox/closed.json) reads correctly as it is; AdoptInbox moves it into this
// layout when a driver starts.

// ProcessedDir holds the final statuses of processed messages.
func (b Box) ProcessedDir() string { return filepath.Join(b.Root, "processed") }

// FailedDir holds the final statuses of failed messages.
func (b Box) FailedDir() string { return filepath.Join(b.Root, "failed") }

// StatusDirs are the directories a message's status may be in: open first.
// Watchers of message states watch all three.
func (b Box) StatusDirs() []string { return []string{b.StatusDir(), b.ProcessedDir(), b.FailedDir()} }

// statusDirFor is the directory a status in state belongs in.
func (b Box) statusDirFor(state string) string {
	switch state {
	case StateProcessed:
		return b.ProcessedDir()
	case StateFailed:
		return b.FailedDir()
	}
	return b.StatusDir()
}

// oldClosedCache is inbox/closed.json, the cache of final messages older
// pantty kept before the final states had directories of their own.
func (b Box) oldClosedCache() string { return filepath.Join(b.Root, "closed.json") }

// ReadStatus reads a message's status wherever it is; a message with no status
// file is queued.
func (b Box) ReadStatus(id string) (Status, error) {
	return b.readStatusIn(id, b.StatusDirs())
}

// readStatusIn reads id's status from the directories that hold a file of it.
// Two copies are a move a crash interrupted: the later updated_at wins.
func (b Box) readStatusIn(id string, dirs []string) (Status, error) {
	var found []Status
	var errs []error
	for _, dir := range dirs {
		var st Status
		path := filepath.Join(dir, id+".toml")
		err := b.readStatus(path, &st)
		if err == nil {
			err = st.valid(id, path)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		default:
			found = append(found, st)
		}
	}
	if len(errs) > 0 {
		return Status{}, errors.Join(errs...)
	}
	if len(found) == 0 {
		return Status{ID: id, State: StateQueued}, nil
	}
	newest := found[0]
	for _, st := range found[1:] {
		if st.UpdatedAt.After(newest.UpdatedAt) {
			newest = st
		}
	}
	return newest, nil
}

// WriteStatus records a message's state: the status is written atomically in
// its state's directory, then any copy in another state's directory is removed.
func (b Box) WriteStatus(st Status) error {
	st.UpdatedAt = b.now().UTC()
	dir := b.statusDirFor(st.State)
	if err := os.MkdirAll(dir, fsatomic.DirMode); err != nil {
		return err
	}
	if err := fsatomic.WriteState(b.Tmp, filepath.Join(dir, st.ID+".toml"), st); err != nil {
		return err
	}
	for _, other := range b.StatusDirs() {
		if other == dir {
			continue
		}
		if err := os.Remove(filepath.Join(other, st.ID+".toml")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("status of %s: %w", st.ID, err)
		}
	}
	return nil
}

// FinalRef is one final message known from its directory alone, not decoded.
type FinalRef struct {
	ID    string
	State string    // StateProcessed or StateFailed: the directory's
	At    time.Time // the status file's modification time: when it became final
}

// View is one pass over the inbox that decodes only the open messages.
type View struct {
	Open  []Entry    // every message not final, queue order; unreadable ones set aside (Entry.SetAside)
	Final []FinalRef // every final message whose message file is stored, oldest first
	// decoded holds final statuses this pass had to decode anyway (an inbox
	// an older pantty wrote keeps them in status/); ReadFinal uses them.
	decoded map[string]Entry
}

// Counts returns how many stored messages are processed and failed.
func (v View) Counts() (processed, failed int) {
	for _, r := range v.Final {
		if r.State == StateProcessed {
			processed++
		} else {
			failed++
		}
	}
	return processed, failed
}

// Newest is the final message of state (either, when state is "") whose
// status was written last.
func (v View) Newest(state string) (FinalRef, bool) {
	for i := len(v.Final) - 1; i >= 0; i-- {
		if state == "" || v.Final[i].State == state {
			return v.Final[i], true
		}
	}
	return FinalRef{}, false
}

// ClosedPast names a board message that became final after cursor.toml was
// written and lies beyond its cursor but before the first open message: the
// cursor should have moved past it. Only messages whose status was written
// after the cursor are decoded; the driver writes the cursor right after a
// final status, so normally none is.
func (b Box) ClosedPast(v View, c Cursor) (string, bool) {
	limit := int64(-1)
	for _, e := range v.Open {
		if e.Msg.From != guard.ReservedSender {
			limit = e.Msg.Seq
			break
		}
	}
	for _, r := range v.Final {
		if !r.At.After(c.Updated) {
			continue
		}
		e, ok := b.ReadFinal(v, r)
		if !ok || e.Msg.ID == c.ID || e.Msg.From == guard.ReservedSender || e.Msg.Seq <= c.Seq || (limit >= 0 && e.Msg.Seq > limit) {
			continue
		}
		return e.Msg.ID, true
	}
	return "", false
}

// inboxScan is what the directory listings say: the stored message ids and,
// per id, the status directories that hold a file of it.
type inboxScan struct {
	ids   []string
	where map[string][]string
}

// scanInbox lists inbox/msgs and the status directories without opening a file.
func (b Box) scanInbox() (inboxScan, error) {
	ents, err := fsafe.ReadDir(b.MsgsDir())
	if err != nil {
		return inboxScan{}, err
	}
	sc := inboxScan{ids: make([]string, 0, len(ents)), where: map[string][]string{}}
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && guard.ValidID(id) {
			sc.ids = append(sc.ids, id)
		}
	}
	for _, dir := range b.StatusDirs() {
		names, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return inboxScan{}, err
		}
		for _, e := range names {
			if id, ok := strings.CutSuffix(e.Name(), ".toml"); ok && guard.ValidID(id) {
				sc.where[id] = append(sc.where[id], dir)
			}
		}
	}
	return sc, nil
}

// onlyFinal reports whether every status file of an id is in a final directory.
func (b Box) onlyFinal(dirs []string) bool {
	for _, d := range dirs {
		if d == b.StatusDir() {
			return false
		}
	}
	return len(dirs) > 0
}

// View reads the inbox decoding only what is open: the open messages in queue
// order and a reference to every final one. A final message's status is
// decoded only when it has more than one copy, or one in status/ (a move a
// crash interrupted, or an inbox an older pantty wrote), where only the
// content can say which copy holds.
func (b Box) View() (View, error) {
	sc, err := b.scanInbox()
	if err != nil {
		return View{}, err
	}
	v := View{decoded: map[string]Entry{}}
	for _, id := range sc.ids {
		dirs := sc.where[id]
		if b.onlyFinal(dirs) && len(dirs) == 1 {
			if ref, ok := b.finalRef(id, dirs); ok {
				v.Final = append(v.Final, ref)
			}
			continue
		}
		e, ok := b.readEntryIn(id, dirs)
		if !ok {
			continue
		}
		if e.SetAside == "" && Final(e.Status.State) {
			if ref, ok := b.finalRef(id, []string{b.statusDirFor(e.Status.State), b.StatusDir()}); ok {
				ref.State = e.Status.State
				v.Final = append(v.Final, ref)
				v.decoded[id] = e
			}
			continue
		}
		v.Open = append(v.Open, e)
	}
	SortEntries(v.Open)
	sort.SliceStable(v.Final, func(i, j int) bool { return v.Final[i].At.Before(v.Final[j].At) })
	return v, nil
}

// finalRef builds the reference of a final message from the first of dirs
// holding its status file. ok is false when none does any more.
func (b Box) finalRef(id string, dirs []string) (FinalRef, bool) {
	for _, d := range dirs {
		fi, err := os.Lstat(filepath.Join(d, id+".toml"))
		if err != nil {
			continue
		}
		state := StateFailed
		if d == b.ProcessedDir() {
			state = StateProcessed
		}
		return FinalRef{ID: id, State: state, At: fi.ModTime()}, true
	}
	return FinalRef{}, false
}

// ReadFinal decodes one final message the view refers to. An unreadable
// message or status comes back as Entry.SetAside says, like an open one.
func (b Box) ReadFinal(v View, r FinalRef) (Entry, bool) {
	if e, ok := v.decoded[r.ID]; ok {
		return e, true
	}
	return b.readEntryIn(r.ID, b.StatusDirs())
}

// ReadEntry reads one message and its status, wherever the status is; an
// unreadable one comes back set aside (Entry.SetAside), ok is false when the
// message file is gone.
func (b Box) ReadEntry(id string) (Entry, bool) { return b.readEntryIn(id, b.StatusDirs()) }

// StatusDirFor is the directory a status in state belongs in.
func (b Box) StatusDirFor(state string) string { return b.statusDirFor(state) }

// Entries reads every stored message and its status, in queue order (Seq,
// then id): the whole history, for listings that show it (`seat inbox`,
// `pantty events`) and the driver's start. Readers that need only what is
// open and how much is done use View. A message whose message or status file
// cannot be read is listed failed (ReasonUnreadable, the error in its
// detail), never skipped.
func (b Box) Entries() ([]Entry, error) {
	sc, err := b.scanInbox()
	if err != nil {
		return nil, err
	}
	es := make([]Entry, 0, len(sc.ids))
	for _, id := range sc.ids {
		if e, ok := b.readEntryIn(id, sc.where[id]); ok {
			es = append(es, e)
		}
	}
	SortEntries(es)
	return es, nil
}

// readEntryIn reads one message and its status from the directories that hold
// it. An entry whose message or status file cannot be read is not an error of
// the whole inbox: it comes back failed (ReasonUnreadable, the error as its
// detail; the message's queue position from its file's mtime when the file
// itself is unreadable), marked SetAside until the driver records that, so
// one bad file never blocks the queue or a listing. ok is false when the
// message file is gone.
func (b Box) readEntryIn(id string, dirs []string) (e Entry, ok bool) {
	m, merr := b.ReadStored(id)
	st, serr := b.readStatusIn(id, dirs)
	if merr == nil && serr == nil {
		return Entry{Msg: m, Status: st}, true
	}
	if merr != nil {
		fi, err := os.Lstat(b.MsgPath(id))
		if err != nil {
			return Entry{}, false
		}
		m = Stored{ID: id, Seq: fi.ModTime().UnixNano(), EnqueuedAt: fi.ModTime().UTC()}
	}
	if serr == nil && st.State == StateFailed && st.Reason == ReasonUnreadable {
		return Entry{Msg: m, Status: st}, true // set aside before
	}
	why := errors.Join(merr, serr).Error()
	return Entry{Msg: m, SetAside: why, Status: Status{ID: id, State: StateFailed, Reason: ReasonUnreadable,
		Detail: fsatomic.OneLine(why), EndedAt: b.now().UTC()}}, true
}

// AdoptInbox moves an inbox an older pantty wrote into this layout: every
// final status still in status/ is renamed into processed/ or failed/ (the
// file itself, byte for byte, so its modification time stays when it became
// final), and the old closed cache is removed. Only the owner runs it (the
// driver at start, under owner.lock); a status it cannot read stays where it
// is, for the driver to set aside. It returns how many statuses it moved.
func (b Box) AdoptInbox() (int, error) {
	for _, d := range b.StatusDirs() {
		if err := os.MkdirAll(d, fsatomic.DirMode); err != nil {
			return 0, err
		}
	}
	names, err := os.ReadDir(b.StatusDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	count, touched := 0, map[string]bool{}
	for _, e := range names {
		id, ok := strings.CutSuffix(e.Name(), ".toml")
		if !ok || !guard.ValidID(id) {
			continue
		}
		var st Status
		if b.readStatus(filepath.Join(b.StatusDir(), e.Name()), &st) != nil || !Final(st.State) || st.ID != id {
			continue
		}
		dir := b.statusDirFor(st.State)
		if _, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
			continue // a copy is there already: readers pick the newer
		}
		if err := os.Rename(filepath.Join(b.StatusDir(), e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return count, err
		}
		count++
		touched[dir], touched[b.StatusDir()] = true, true
	}
	for d := range touched {
		if err := fsatomic.SyncDir(d); err != nil {
			return count, err
		}
	}
	if err := os.Remove(b.oldClosedCache()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return count, err
	}
	return count, nil
}
