package seat

import (
	"encoding/json"
	"github.com/pantty/pantty/internal/guard"
	"os"
	"reflect"
	"syscall"
	"time"
)

// The closed cache (inbox/closed.json) keeps the decoded form of every message
// that reached a final state, so that Entries need not read and decode the
// 30 days of history each caller (status, every recover sweep) would otherwise
// pay for. It is only a cache: an entry is used only while both of its files
// still carry the fingerprint recorded with it, and a cache that is missing,
// corrupt, of another version or a symlink is ignored. Removing it is always safe.

// closedCacheVersion is the format of inbox/closed.json; a file of any other
// version is ignored and rewritten by the next refresh.
const closedCacheVersion = 1

// closedRefreshMin is how many final entries the driver's inbox load or prune
// must have decoded from their files (or found stale in the cache) before it
// rewrites the cache: below it the saving does not pay for the write.
const closedRefreshMin = 32

// closedSettle keeps a file changed this recently out of the cache. A rewrite
// within one file-system timestamp tick could reuse a freed inode with the same
// size and times (git's "racily clean" problem); a file whose ctime is older
// than the refresh by more than a tick cannot be rewritten with that ctime.
// Tests set it to 0.
var closedSettle = 2 * time.Second

// ClosedCachePath is inbox/closed.json, the driver's validated cache of final
// messages (docs/state.md).
func (s Seat) ClosedCachePath() string { return s.path("inbox", "closed.json") }

// fileMark identifies one version of a file without reading it. Every state
// write is a rename of a new file, so a rewrite changes the inode and ctime.
type fileMark struct {
	Ino   uint64 `json:"ino"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime_ns"`
	Ctime int64  `json:"ctime_ns"`
}

// markOf fingerprints a regular file; anything else (missing, a symlink, a
// directory) has no mark and is never served from the cache.
func markOf(path string) (fileMark, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileMark{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileMark{}, false
	}
	return fileMark{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}, true
}

// closedEntry is one final message in the cache with the marks of the message
// file and the status file it was decoded from.
type closedEntry struct {
	Msg        Stored   `json:"msg"`
	Status     Status   `json:"status"`
	MsgFile    fileMark `json:"msg_file"`
	StatusFile fileMark `json:"status_file"`
}

// closedFile is inbox/closed.json as read.
type closedFile struct {
	Version int           `json:"version"`
	Entries []closedEntry `json:"entries"`
}

// readClosed returns the cached final entries by id, or nil when there is no
// usable cache. It never fails: whatever is wrong with the cache, Entries reads
// the files instead, which is always correct.
func (s Seat) readClosed() map[string]closedEntry {
	data, err := readRegular(s.ClosedCachePath())
	if err != nil {
		return nil
	}
	var f closedFile
	if json.Unmarshal(data, &f) != nil || f.Version != closedCacheVersion {
		return nil
	}
	m := make(map[string]closedEntry, len(f.Entries))
	for _, c := range f.Entries {
		if guard.ValidID(c.Msg.ID) && Final(c.Status.State) {
			m[c.Msg.ID] = c
		}
	}
	return m
}

// stillClosed reports whether both files of id are exactly the versions c was
// decoded from, so that c may stand in for reading them.
func (s Seat) stillClosed(id string, c closedEntry) bool {
	if m, ok := markOf(s.msgPath(id)); !ok || m != c.MsgFile {
		return false
	}
	m, ok := markOf(s.statusPath(id))
	return ok && m == c.StatusFile
}

// RefreshClosedCache rewrites inbox/closed.json from es, an Entries() result the
// caller has just read: each final entry is stored with the fingerprints its two
// files have now. Only the seat's owner may call it (the driver, under
// owner.lock): it is the only writer of status files, so none can change between
// its read and these fingerprints. An entry is left out (and read from its
// files) when a file cannot be fingerprinted, changed within closedSettle, or the
// entry would not come back from JSON exactly as it was read.
func (s Seat) RefreshClosedCache(es []Entry) error {
	settled := time.Now().Add(-closedSettle).UnixNano()
	out := struct {
		Version int               `json:"version"`
		Entries []json.RawMessage `json:"entries"`
	}{Version: closedCacheVersion, Entries: []json.RawMessage{}}
	for _, e := range es {
		if !Final(e.Status.State) {
			continue
		}
		mm, ok := markOf(s.msgPath(e.Msg.ID))
		if !ok || mm.Ctime > settled {
			continue
		}
		sm, ok := markOf(s.statusPath(e.Msg.ID))
		if !ok || sm.Ctime > settled {
			continue
		}
		if b, ok := roundTrip(closedEntry{Msg: e.Msg, Status: e.Status, MsgFile: mm, StatusFile: sm}); ok {
			out.Entries = append(out.Entries, b)
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return s.WriteRaw(s.ClosedCachePath(), append(data, '\n'))
}

// roundTrip encodes c and returns it only if decoding gives back the same
// value: a time in another location than UTC, or text JSON would rewrite, must
// not make a cached entry differ from a fresh read.
func roundTrip(c closedEntry) (json.RawMessage, bool) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, false
	}
	var back closedEntry
	if json.Unmarshal(b, &back) != nil || !reflect.DeepEqual(back, c) {
		return nil, false
	}
	return b, true
}

// refreshClosedIfWorthwhile rewrites the cache from the owner's own inbox read
// when that read decoded, or found stale, at least closedRefreshMin entries:
// one file write, and only when later readers are spared real work.
func (s Seat) refreshClosedIfWorthwhile(r inboxRead) error {
	if r.uncached < closedRefreshMin && r.stale < closedRefreshMin {
		return nil
	}
	return s.RefreshClosedCache(r.entries)
}

// refreshClosedCache runs on the heartbeat tick: once closedRefreshMin messages
// have finished since the last refresh and nothing is in flight, the cache is
// brought up to date, so a busy seat's readers do not decode a day of history
// until the next prune. The count restarts either way; messages finished in the
// last closedSettle are left for the next refresh.
func (d *Driver) refreshClosedCache() {
	if d.closedSince < closedRefreshMin || d.flight != nil {
		return
	}
	d.closedSince = 0
	r, err := d.S.readInbox()
	if err == nil && (r.uncached > 0 || r.stale > 0) {
		// Enough finished to pay (the count above); whatever is uncached now
		// goes in, however few settled in time.
		err = d.S.RefreshClosedCache(r.entries)
	}
	if err != nil {
		d.logf("inbox cache: %v", err)
	}
}
