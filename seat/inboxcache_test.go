package seat

import (
	"encoding/json"
	"fmt"
	"github.com/pantty/pantty/internal/guard"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// historySeat builds a seat with n messages in every state the inbox knows
// (queued with and without a status file, submitted, processed, failed, a time
// in another zone), written with the package's own Enqueue and WriteStatus, and
// lets files just written be cached (closedSettle 0).
// historySeat sets the package's closedSettle for the test: the tests that
// call it (every test in this file) must not run in parallel.
func historySeat(t *testing.T, n int) Seat {
	t.Helper()
	settle := closedSettle
	closedSettle = 0
	t.Cleanup(func() { closedSettle = settle })
	s, err := Open(t.TempDir(), "history")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	east := time.FixedZone("", 2*3600)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("m%03d", i)
		at := base.Add(time.Duration(i) * time.Second)
		m := guard.Message{ID: id, From: "board", Board: "b", Channel: "general", Text: fmt.Sprintf("message %d: “quoted”, ünïcode", i)}
		if _, err := s.Enqueue(m, 0, at); err != nil {
			t.Fatal(err)
		}
		st := Status{ID: id, Attempts: 1, Nonce: "n" + id, SessionID: "sess", SubmittedAt: at.Add(time.Second).UTC()}
		switch i % 6 {
		case 0:
			st.State, st.TurnEnd, st.Reply = StateProcessed, "1-1-Stop.json", "done <ok> & \"quoted\""
			st.EndedAt = at.Add(2 * time.Second).UTC()
		case 1:
			st.State, st.Reason, st.Detail = StateFailed, ReasonCeiling, "the turn ran past its ceiling"
			st.EndedAt = at.Add(3 * time.Second).UTC()
		case 2:
			st.State, st.TurnEnd = StateProcessed, "transcript:/x.jsonl:7"
			st.EndedAt = at.Add(2 * time.Second).In(east) // not UTC: must still equal a fresh read
		case 3:
			continue // queued: no status file
		case 4:
			st.State = StateQueued
			st.Reason, st.NotBefore = "provider-refusal", at.Add(time.Hour).UTC()
		case 5:
			st.State = StateSubmitted
		}
		if err := s.WriteStatus(st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func mustEntries(t *testing.T, s Seat) []Entry {
	t.Helper()
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// sameEntries fails naming the first entry and field that differ.
func sameEntries(t *testing.T, got, want []Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Msg, want[i].Msg) {
			t.Fatalf("entry %d message:\n got %+v\nwant %+v", i, got[i].Msg, want[i].Msg)
		}
		if !reflect.DeepEqual(got[i].Status, want[i].Status) {
			t.Fatalf("entry %d (%s) status:\n got %+v\nwant %+v", i, want[i].Msg.ID, got[i].Status, want[i].Status)
		}
	}
}

func finals(es []Entry) int {
	n := 0
	for _, e := range es {
		if Final(e.Status.State) {
			n++
		}
	}
	return n
}

func TestCachedEntriesEqualAFreshRead(t *testing.T) {
	s := historySeat(t, 200)
	// A status written by hand with a local date-time (no offset), read in
	// the machine's zone: whether or not it is cached, it must read the same.
	local := "id = \"m012\"\nstate = \"processed\"\nattempts = 1\nresubmits = 0\nretries = 0\n" +
		"ended_at = 2026-01-02T03:04:05\nupdated_at = 2026-01-02T03:04:05Z\n"
	if err := os.WriteFile(s.statusPath("m012"), []byte(local), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := mustEntries(t, s)
	if finals(fresh) < 90 {
		t.Fatalf("only %d final entries: the seat does not exercise the cache", finals(fresh))
	}
	if err := s.RefreshClosedCache(fresh); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(s.ClosedCachePath())
	if err != nil || fi.Mode().Perm() != FileMode {
		t.Fatalf("closed.json: %v, mode %v; want a 0600 file", err, fi.Mode())
	}
	r, err := s.readInbox()
	if err != nil {
		t.Fatal(err)
	}
	// Every final entry (m012 aside), the one in another zone included, came
	// from the cache.
	cached := len(s.readClosed())
	if _, ok := s.readClosed()["m012"]; !ok {
		cached++
	}
	if cached != finals(fresh) || r.stale != 0 {
		t.Fatalf("cache used for %d of %d final entries (uncached %d, stale %d)",
			len(s.readClosed()), finals(fresh), r.uncached, r.stale)
	}
	sameEntries(t, r.entries, fresh)
	sameEntries(t, mustEntries(t, s), fresh)
}

func TestAnEntryThatWouldNotReadBackIsNotCached(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	// A named zone other than the machine's: JSON gives such a time back as a
	// fixed offset (an offset of the local zone would come back as Local).
	_, local := at.Local().Zone()
	var named *time.Location
	for _, name := range []string{"Asia/Tokyo", "America/Sao_Paulo"} {
		if l, err := time.LoadLocation(name); err == nil {
			if _, off := at.In(l).Zone(); off != local {
				named = l
				break
			}
		}
	}
	if named == nil {
		t.Skip("no zone database")
	}
	ok := closedEntry{Msg: Stored{ID: "a", Text: "fine", EnqueuedAt: at},
		Status: Status{ID: "a", State: StateProcessed, EndedAt: at}}
	if _, good := roundTrip(ok); !good {
		t.Fatal("an entry JSON keeps exactly was refused")
	}
	zoned := ok
	zoned.Status.EndedAt = at.In(named)
	badText := ok
	badText.Msg.Text = "not \xff UTF-8" // JSON brings it back with U+FFFD
	for name, c := range map[string]closedEntry{"a named zone": zoned, "invalid UTF-8": badText} {
		if _, good := roundTrip(c); good {
			t.Errorf("%s: cached, though it would read back different from its file", name)
		}
	}
}

func TestARewrittenStatusIsReadFreshNotFromTheCache(t *testing.T) {
	s := historySeat(t, 24)
	es := mustEntries(t, s)
	if err := s.RefreshClosedCache(es); err != nil {
		t.Fatal(err)
	}
	// m007 failed: 'seat retry' (no driver) puts it back in the queue.
	if err := Retry(s, "m007"); err != nil {
		t.Fatal(err)
	}
	// m006 processed: rewritten with another final status by the driver's writer.
	st, err := s.ReadStatus("m006")
	if err != nil {
		t.Fatal(err)
	}
	st.Reply = "a later reply"
	if err := s.WriteStatus(st); err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, e := range mustEntries(t, s) {
		got[e.Msg.ID] = e.Status
	}
	if g := got["m007"]; g.State != StateQueued || g.Retries != 1 {
		t.Errorf("retried m007 reads %s (retries %d), want queued (retries 1)", g.State, g.Retries)
	}
	if g := got["m006"]; g.Reply != "a later reply" {
		t.Errorf("rewritten m006 reads reply %q from the cache", g.Reply)
	}
}

// tamperedCache is a cache with valid fingerprints whose statuses say what no
// file says: if it is read, the entries show it.
func tamperedCache(t *testing.T, s Seat, version int) []byte {
	t.Helper()
	if err := s.RefreshClosedCache(mustEntries(t, s)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.ClosedCachePath())
	if err != nil {
		t.Fatal(err)
	}
	var f closedFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for i := range f.Entries {
		f.Entries[i].Status.Reply = "tampered"
	}
	f.Version = version
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestACorruptCacheIsIgnored(t *testing.T) {
	s := historySeat(t, 36)
	want := mustEntries(t, s)
	valid := tamperedCache(t, s, closedCacheVersion)
	aside := filepath.Join(t.TempDir(), "closed.json")
	if err := os.WriteFile(aside, valid, 0o600); err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) func() error {
		return func() error { return os.WriteFile(s.ClosedCachePath(), data, 0o600) }
	}
	// The control: a well-formed cache is believed while its fingerprints hold,
	// so each case below is ignored for what is wrong with it, not by chance.
	if err := put(valid)(); err != nil {
		t.Fatal(err)
	}
	if es := mustEntries(t, s); reflect.DeepEqual(es, want) {
		t.Fatal("the tampered control cache was not read: the cases below prove nothing")
	}
	for _, c := range []struct {
		name string
		make func() error
	}{
		{"garbage", put([]byte("\x00\xffnot json at all"))},
		{"truncated", put(valid[:len(valid)/2])},
		{"wrong version", put(tamperedCache(t, s, closedCacheVersion+1))},
		{"empty", put(nil)},
		{"symlink", func() error { return os.Symlink(aside, s.ClosedCachePath()) }},
		{"directory", func() error { return os.Mkdir(s.ClosedCachePath(), 0o700) }},
	} {
		if err := os.RemoveAll(s.ClosedCachePath()); err != nil {
			t.Fatal(err)
		}
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		es, err := s.Entries()
		if err != nil {
			t.Errorf("%s cache: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(es, want) {
			t.Errorf("%s cache: entries differ from a read without it", c.name)
		}
	}
}

// TestACorruptFileIsSetAsideEvenWhenTheCacheHasIt: a file changed after the
// cache recorded it is read again, and a corrupt one is listed failed
// (unreadable, its path in the detail), not taken from the cache and not an
// error of the whole inbox.
func TestACorruptFileIsSetAsideEvenWhenTheCacheHasIt(t *testing.T) {
	for _, c := range []struct {
		name string
		path func(Seat, string) string
	}{
		{"message", Seat.msgPath},
		{"status", Seat.statusPath},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := historySeat(t, 12)
			if err := s.RefreshClosedCache(mustEntries(t, s)); err != nil {
				t.Fatal(err)
			}
			if _, ok := s.readClosed()["m006"]; !ok {
				t.Fatal("m006 (processed) is not in the cache")
			}
			bad := c.path(s, "m006")
			if err := os.WriteFile(bad, []byte("{{ corrupt"), 0o600); err != nil {
				t.Fatal(err)
			}
			es, err := s.Entries()
			if err != nil {
				t.Fatalf("corrupt %s file: the whole inbox failed: %v", c.name, err)
			}
			if len(es) != 12 {
				t.Fatalf("corrupt %s file: %d entries listed, want all 12", c.name, len(es))
			}
			for _, e := range es {
				if e.Msg.ID != "m006" {
					continue
				}
				if e.Status.State != StateFailed || e.Status.Reason != ReasonUnreadable ||
					!strings.Contains(e.Status.Detail, bad) || e.SetAside == "" {
					t.Fatalf("corrupt %s file: m006 listed as %+v, want failed %s naming %s", c.name, e.Status, ReasonUnreadable, bad)
				}
			}
		})
	}
}

func TestARemovedMessageDisappearsThoughTheCacheListsIt(t *testing.T) {
	s := historySeat(t, 24)
	if err := s.RefreshClosedCache(mustEntries(t, s)); err != nil {
		t.Fatal(err)
	}
	cached := s.readClosed()
	for _, id := range []string{"m006", "m008"} {
		if _, ok := cached[id]; !ok {
			t.Fatalf("%s is not in the cache", id)
		}
	}
	// m006 removed the way Prune removes it; m008 lost only its status file,
	// which makes it queued again.
	for _, p := range []string{s.msgPath("m006"), s.statusPath("m006"), s.statusPath("m008")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.readInbox()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.entries {
		if e.Msg.ID == "m006" {
			t.Error("removed m006 is still listed")
		}
		if e.Msg.ID == "m008" && e.Status.State != StateQueued {
			t.Errorf("m008 without its status file reads %s, want queued", e.Status.State)
		}
	}
	if r.stale != 2 {
		t.Errorf("stale cache entries: %d, want 2", r.stale)
	}
}

func TestPruneDropsPrunedMessagesFromTheCache(t *testing.T) {
	s := historySeat(t, 0)
	// 40 messages processed long ago, then 6 recent ones: a prune removes the
	// 40, enough (closedRefreshMin) to rewrite the cache without them.
	now := time.Now()
	old := now.Add(-MessageRetention - time.Hour)
	var ids []string
	for i := 0; i < 46; i++ {
		id := fmt.Sprintf("p%03d", i)
		ids = append(ids, id)
		if _, err := s.Enqueue(guard.Message{ID: id, Text: "x"}, 0, old.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		ended := old.Add(time.Duration(i)*time.Second + time.Millisecond)
		if i >= 40 {
			ended = now
		}
		if err := s.WriteStatus(Status{ID: id, State: StateProcessed, EndedAt: ended.UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	es := mustEntries(t, s)
	if err := s.RefreshClosedCache(es); err != nil {
		t.Fatal(err)
	}
	cur, _ := CursorOf(es)
	if n := s.Prune(now, cur); n < 80 {
		t.Fatalf("prune removed %d files, want the 40 old messages and their statuses", n)
	}
	cached := s.readClosed()
	for i, id := range ids {
		_, err := os.Lstat(s.msgPath(id))
		if kept := err == nil; kept != (i >= 40) {
			t.Errorf("%s kept=%v after the prune", id, kept)
		}
		if _, ok := cached[id]; ok != (i >= 40) {
			t.Errorf("%s cached=%v after the prune", id, ok)
		}
	}
	r, err := s.readInbox()
	if err != nil {
		t.Fatal(err)
	}
	if r.uncached != 0 || r.stale != 0 || len(r.entries) != 6 {
		t.Errorf("after prune: %d entries, %d uncached, %d stale; want 6 entries, a cache up to date",
			len(r.entries), r.uncached, r.stale)
	}
}

func TestASmallChangeDoesNotRewriteTheCache(t *testing.T) {
	s := historySeat(t, 24)
	es := mustEntries(t, s)
	if err := s.RefreshClosedCache(es); err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(s.ClosedCachePath())
	if err != nil {
		t.Fatal(err)
	}
	// m000 to m002 are behind the cursor (m003 is queued): pruning them a month
	// later is too little to pay for a rewrite, and they are gone all the same.
	cur, _ := CursorOf(es)
	if cur.ID != "m002" {
		t.Fatalf("cursor at %q, want m002", cur.ID)
	}
	if n := s.Prune(time.Now().Add(MessageRetention+time.Hour), cur); n != 6 {
		t.Fatalf("prune removed %d files, want 6", n)
	}
	if after, err := os.Lstat(s.ClosedCachePath()); err != nil || !os.SameFile(before, after) {
		t.Error("three pruned messages rewrote the cache")
	}
	for _, e := range mustEntries(t, s) {
		if e.Msg.ID <= "m002" {
			t.Errorf("pruned %s is still listed", e.Msg.ID)
		}
	}
}

func TestReadersNeverWriteTheCache(t *testing.T) {
	s := historySeat(t, 120)
	for i := 0; i < 3; i++ {
		mustEntries(t, s)
		if _, err := s.readInbox(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(s.ClosedCachePath()); !os.IsNotExist(err) {
		t.Fatalf("a read created %s (%v): readers must write nothing", s.ClosedCachePath(), err)
	}
}

func TestTheOwnerRefreshesOnlyWhenItPays(t *testing.T) {
	s := historySeat(t, 120)
	r, err := s.readInbox()
	if err != nil {
		t.Fatal(err)
	}
	if r.uncached < closedRefreshMin {
		t.Fatalf("%d uncached final entries, want at least %d", r.uncached, closedRefreshMin)
	}
	if err := s.refreshClosedIfWorthwhile(r); err != nil {
		t.Fatal(err)
	}
	before, err := os.Lstat(s.ClosedCachePath())
	if err != nil {
		t.Fatalf("no cache after a read of %d uncached entries: %v", r.uncached, err)
	}
	if r, err = s.readInbox(); err != nil || r.uncached != 0 {
		t.Fatalf("second read: %d uncached, %v", r.uncached, err)
	}
	if err := s.refreshClosedIfWorthwhile(r); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Lstat(s.ClosedCachePath()); err != nil || !os.SameFile(before, after) {
		t.Error("a cache already up to date was rewritten")
	}
}

func TestRecentlyChangedFilesAreNotCached(t *testing.T) {
	s := historySeat(t, 12)
	closedSettle = time.Hour
	if err := s.RefreshClosedCache(mustEntries(t, s)); err != nil {
		t.Fatal(err)
	}
	if n := len(s.readClosed()); n != 0 {
		t.Fatalf("%d entries written seconds ago were cached: a rewrite in the same tick could keep their fingerprint", n)
	}
}

func TestRefreshRefusesASymlinkedCache(t *testing.T) {
	s := historySeat(t, 6)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, s.ClosedCachePath()); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshClosedCache(mustEntries(t, s)); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("refresh through a symlink: got %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the refresh wrote through the symlink: %q", b)
	}
}

func TestTheDriverWritesTheCacheAtLoadAndPrune(t *testing.T) {
	s := historySeat(t, 120)
	want := mustEntries(t, s)
	d := &Driver{S: s}
	if err := d.loadInbox(); err != nil {
		t.Fatal(err)
	}
	if len(d.order) != len(want) {
		t.Fatalf("driver loaded %d entries, want %d", len(d.order), len(want))
	}
	if n := len(s.readClosed()); n != finals(want) {
		t.Fatalf("after the driver's inbox load: %d entries cached, want %d", n, finals(want))
	}
	// The daily prune rewrites it too (here: after it was removed by hand).
	if err := os.Remove(s.ClosedCachePath()); err != nil {
		t.Fatal(err)
	}
	cur, _ := CursorOf(want)
	if err := s.Write(s.CursorPath(), cur); err != nil {
		t.Fatal(err)
	}
	d.prune()
	if n := len(s.readClosed()); n != finals(want) {
		t.Fatalf("after the driver's prune: %d entries cached, want %d", n, finals(want))
	}
	sameEntries(t, mustEntries(t, s), want)
}

// TestTheHeartbeatRefreshesTheCacheAsMessagesFinish: the driver does not wait
// for its daily prune; once closedRefreshMin messages have finished and nothing
// is in flight, the heartbeat tick brings the cache up to date.
func TestTheHeartbeatRefreshesTheCacheAsMessagesFinish(t *testing.T) {
	s := historySeat(t, 40)
	d := &Driver{S: s}
	d.closedSince = closedRefreshMin - 1
	d.refreshClosedCache()
	if _, err := os.Lstat(s.ClosedCachePath()); err == nil {
		t.Fatal("the cache was written before enough messages had finished")
	}
	d.closedSince = closedRefreshMin
	d.refreshClosedCache()
	want := mustEntries(t, s)
	if n := len(s.readClosed()); n != finals(want) || n == 0 {
		t.Fatalf("after the heartbeat refresh: %d entries cached, want %d", n, finals(want))
	}
	if d.closedSince != 0 {
		t.Fatalf("the count was not restarted (%d)", d.closedSince)
	}
}
