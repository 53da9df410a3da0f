package inbox

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
)

// historySeat builds a seat with n messages in every state the inbox knows
// (queued with and without a status file, submitted, processed, failed, a time
// in another zone), written with the package's own Enqueue and WriteStatus.
func historySeat(t *testing.T, n int) Box {
	t.Helper()
	dir := t.TempDir()
	s := Box{Root: filepath.Join(dir, "inbox"), Tmp: filepath.Join(dir, "tmp")}
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
			st.EndedAt = at.Add(2 * time.Second).In(east)
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

func mustEntries(t *testing.T, s Box) []Entry {
	t.Helper()
	es, err := s.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func mustView(t *testing.T, s Box) View {
	t.Helper()
	v, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	return v
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
		if !reflect.DeepEqual(got[i].Status.UTC(), want[i].Status.UTC()) {
			t.Fatalf("entry %d (%s) status:\n got %+v\nwant %+v", i, want[i].Msg.ID, got[i].Status, want[i].Status)
		}
	}
}

// UTC is the status with every time in UTC, for comparing what was written
// with what is read back (TOML keeps the offset, not the zone's name).
func (st Status) UTC() Status {
	for _, p := range []*time.Time{&st.NotBefore, &st.SubmittedAt, &st.EndedAt, &st.UpdatedAt} {
		*p = p.UTC()
	}
	return st
}

// openAndFinal splits a full read the way a View must.
func openAndFinal(es []Entry) (open []Entry, final map[string]Entry) {
	final = map[string]Entry{}
	for _, e := range es {
		if Final(e.Status.State) {
			final[e.Msg.ID] = e
		} else {
			open = append(open, e)
		}
	}
	return open, final
}

// TestTheDirectoryIsTheState: a final status sits in processed/ or failed/,
// an open one in status/, and the View — which decodes only what is open —
// says what a full read says: the same open entries, and a reference for
// every final message whose decoded status is the reference's state.
func TestTheDirectoryIsTheState(t *testing.T) {
	t.Parallel()
	s := historySeat(t, 24)
	for id, dir := range map[string]string{"m000": s.ProcessedDir(), "m001": s.FailedDir(), "m004": s.StatusDir(), "m005": s.StatusDir()} {
		if _, err := os.Lstat(filepath.Join(dir, id+".toml")); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		for _, other := range s.StatusDirs() {
			if _, err := os.Lstat(filepath.Join(other, id+".toml")); other != dir && err == nil {
				t.Errorf("%s has a second status file in %s", id, other)
			}
		}
	}
	all := mustEntries(t, s)
	open, final := openAndFinal(all)
	v := mustView(t, s)
	sameEntries(t, v.Open, open)
	if len(v.Final) != len(final) {
		t.Fatalf("%d final references, want %d", len(v.Final), len(final))
	}
	for _, r := range v.Final {
		want, ok := final[r.ID]
		if !ok || want.Status.State != r.State {
			t.Fatalf("reference %+v: the full read says %+v", r, want.Status)
		}
		got, ok := s.ReadFinal(v, r)
		if !ok {
			t.Fatalf("%s: not readable", r.ID)
		}
		sameEntries(t, []Entry{got}, []Entry{want})
	}
	if p, f := v.Counts(); p != 8 || f != 4 {
		t.Errorf("counts: %d processed, %d failed; want 8 and 4", p, f)
	}
}

// TestAStatusMovesAndTheNewestCopyWins: seat retry moves a failed message
// back to status/; a crash between writing the new copy and removing the old
// one leaves two, and the one written last is the state.
func TestAStatusMovesAndTheNewestCopyWins(t *testing.T) {
	t.Parallel()
	s := historySeat(t, 2) // m000 processed, m001 failed
	st, err := s.ReadStatus("m001")
	if err != nil || st.State != StateFailed {
		t.Fatalf("m001: %+v, %v", st, err)
	}
	old, err := os.ReadFile(filepath.Join(s.FailedDir(), "m001.toml"))
	if err != nil {
		t.Fatal(err)
	}
	st.State, st.Reason, st.Retries = StateQueued, "", 1
	if err := s.WriteStatus(st); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(s.FailedDir(), "m001.toml")); err == nil {
		t.Fatal("the retried message kept its failed status file")
	}
	if v := mustView(t, s); len(v.Open) != 1 || v.Open[0].Msg.ID != "m001" || len(v.Final) != 1 {
		t.Fatalf("after the retry: open %d, final %d; want m001 open and one final", len(v.Open), len(v.Final))
	}
	// The crash: the old failed copy is back beside the newer queued one.
	if err := os.WriteFile(filepath.Join(s.FailedDir(), "m001.toml"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := s.ReadStatus("m001"); err != nil || st.State != StateQueued || st.Retries != 1 {
		t.Fatalf("two copies: ReadStatus says %+v, %v; want the newer, queued", st, err)
	}
	v := mustView(t, s)
	if len(v.Open) != 1 || v.Open[0].Status.State != StateQueued {
		t.Fatalf("two copies: the view's open entries %+v, want m001 queued", v.Open)
	}
	if p, f := v.Counts(); p != 1 || f != 0 {
		t.Fatalf("two copies: %d processed, %d failed; want the stale failed copy not counted", p, f)
	}
}

// TestAnInboxAnOlderPanttyWroteIsReadAndAdopted: before this layout every
// status sat in status/ and inbox/closed.json cached the final ones. Such an
// inbox reads the same as it is (a seat whose driver is still the old binary),
// and AdoptInbox — run by a new driver at start — moves each final status,
// byte for byte with its modification time, into its directory and removes
// the cache; a second run moves nothing.
func TestAnInboxAnOlderPanttyWroteIsReadAndAdopted(t *testing.T) {
	t.Parallel()
	s := historySeat(t, 24)
	want := mustEntries(t, s)
	// Write the old layout: every final status back into status/.
	type moved struct {
		data  []byte
		mtime time.Time
	}
	was := map[string]moved{}
	for _, dir := range []string{s.ProcessedDir(), s.FailedDir()} {
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			from, to := filepath.Join(dir, n.Name()), filepath.Join(s.StatusDir(), n.Name())
			old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			if err := os.Chtimes(from, old, old); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(from)
			was[n.Name()] = moved{data, old}
			if err := os.Rename(from, to); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(s.Root, "closed.json"), []byte(`{"version":1,"entries":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(was) != 12 {
		t.Fatalf("%d final statuses moved back, want 12", len(was))
	}

	sameEntries(t, mustEntries(t, s), want)
	v := mustView(t, s)
	open, _ := openAndFinal(want)
	sameEntries(t, v.Open, open)
	if p, f := v.Counts(); p != 8 || f != 4 {
		t.Fatalf("old layout: %d processed, %d failed; want 8 and 4", p, f)
	}

	n, err := s.AdoptInbox()
	if err != nil || n != 12 {
		t.Fatalf("AdoptInbox: moved %d, %v; want 12", n, err)
	}
	for name, m := range was {
		id := strings.TrimSuffix(name, ".toml")
		st, err := s.ReadStatus(id)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.statusDirFor(st.State), name)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != string(m.data) {
			t.Fatalf("%s after adoption: %v (content same: %v)", p, err, string(data) == string(m.data))
		}
		if fi, _ := os.Lstat(p); !fi.ModTime().Equal(m.mtime) {
			t.Errorf("%s: modification time %v, want %v kept", p, fi.ModTime(), m.mtime)
		}
		if _, err := os.Lstat(filepath.Join(s.StatusDir(), name)); err == nil {
			t.Errorf("%s is still in status/", name)
		}
	}
	if _, err := os.Lstat(filepath.Join(s.Root, "closed.json")); err == nil {
		t.Error("inbox/closed.json is still there")
	}
	sameEntries(t, mustEntries(t, s), want)
	if n, err := s.AdoptInbox(); n != 0 || err != nil {
		t.Fatalf("a second AdoptInbox moved %d, %v", n, err)
	}
}

// TestAnUnreadableFileIsSetAsideWhereverItIs: a corrupt message, or a corrupt
// status in any of the three directories, sets that one message aside as
// failed in a full read, and the rest are listed as they are. The View
// decodes only open messages: an open one is set aside there too; a final
// one stays a reference of its directory until something decodes it
// (ReadFinal sets it aside then).
func TestAnUnreadableFileIsSetAsideWhereverItIs(t *testing.T) {
	t.Parallel()
	const corrupt = "{{ corrupt"
	for _, c := range []struct {
		name, id, path, text string
		open                 bool
	}{
		{"message", "m006", "inbox/msgs/m006.json", corrupt, false},
		{"processed status", "m006", "inbox/processed/m006.toml", corrupt, false},
		{"failed status", "m007", "inbox/failed/m007.toml", corrupt, false},
		{"open status", "m005", "inbox/status/m005.toml", corrupt, true},
		// Files that decode without error but are no status of pantty's: a
		// zero-length file (a crash between create and write, a person's
		// `: >`), one without a state, one naming another message, one with a
		// state pantty does not write. Each decoded to a queued-looking zero
		// record that the driver never moved.
		{"empty open status", "m005", "inbox/status/m005.toml", "", true},
		{"state-less open status", "m005", "inbox/status/m005.toml", "id = \"m005\"\nattempts = 1\n", true},
		{"open status of another message", "m005", "inbox/status/m005.toml", "id = \"m004\"\nstate = \"queued\"\n", true},
		{"open status in an unknown state", "m005", "inbox/status/m005.toml", "id = \"m005\"\nstate = \"pending\"\n", true},
		{"empty processed status", "m006", "inbox/processed/m006.toml", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := historySeat(t, 12)
			bad := filepath.Join(s.Root, strings.TrimPrefix(c.path, "inbox/"))
			if err := os.WriteFile(bad, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			es := mustEntries(t, s)
			if len(es) != 12 {
				t.Fatalf("%d entries listed, want all 12", len(es))
			}
			v := mustView(t, s)
			var aside []Entry
			for _, e := range es {
				if e.SetAside != "" {
					aside = append(aside, e)
				}
			}
			for _, e := range v.Open {
				if e.SetAside != "" {
					aside = append(aside, e)
				}
			}
			if !c.open {
				for _, r := range v.Final {
					if r.ID != c.id {
						continue
					}
					e, ok := s.ReadFinal(v, r)
					if !ok || e.SetAside == "" {
						t.Fatalf("ReadFinal(%s) does not set it aside: %+v", c.id, e)
					}
					aside = append(aside, e)
				}
			}
			if len(aside) != 2 {
				t.Fatalf("%d entries set aside, want %s once in the full read and once in the view", len(aside), c.id)
			}
			for _, e := range aside {
				if e.Msg.ID != c.id || e.Status.State != StateFailed || e.Status.Reason != ReasonUnreadable || !strings.Contains(e.Status.Detail, bad) {
					t.Fatalf("set aside: %s %+v, want %s failed %s naming %s", e.Msg.ID, e.Status, c.id, ReasonUnreadable, bad)
				}
			}
		})
	}
}

// TestARemovedMessageIsGoneFromBothReads: a status without its message
// (a prune that removed the message first) is listed nowhere; a message
// without any status file is queued.
func TestARemovedMessageIsGoneFromBothReads(t *testing.T) {
	t.Parallel()
	s := historySeat(t, 12)
	if err := os.Remove(s.MsgPath("m006")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.ProcessedDir(), "m008.toml")); err != nil {
		t.Fatal(err)
	}
	for _, e := range mustEntries(t, s) {
		if e.Msg.ID == "m006" {
			t.Error("removed m006 is listed")
		}
		if e.Msg.ID == "m008" && e.Status.State != StateQueued {
			t.Errorf("m008 without its status file reads %s, want queued", e.Status.State)
		}
	}
	v := mustView(t, s)
	for _, r := range v.Final {
		if r.ID == "m006" || r.ID == "m008" {
			t.Errorf("%s has a final reference", r.ID)
		}
	}
	found := false
	for _, e := range v.Open {
		found = found || e.Msg.ID == "m008"
	}
	if !found {
		t.Error("m008 without its status file is not open")
	}
}

// TestTwoFinalCopiesCountAsTheNewer: a crash while a processed message was
// set aside as failed leaves a copy in processed/ and a newer one in failed/;
// the View counts it once, by the newer.
func TestTwoFinalCopiesCountAsTheNewer(t *testing.T) {
	t.Parallel()
	s := historySeat(t, 1) // m000 processed
	old, err := os.ReadFile(filepath.Join(s.ProcessedDir(), "m000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.ReadStatus("m000")
	st.State, st.Reason = StateFailed, ReasonUnreadable
	if err := s.WriteStatus(st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.ProcessedDir(), "m000.toml"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	v := mustView(t, s)
	if p, f := v.Counts(); p != 0 || f != 1 || len(v.Open) != 0 {
		t.Fatalf("two final copies: %d processed, %d failed, %d open; want the newer, failed, once", p, f, len(v.Open))
	}
}

// A status's times come from the box's clock: the driver's, when it gives
// one. Before, WriteStatus and a set-aside entry read the wall clock whatever
// clock the writer decided on.
func TestStatusTimesAreOnTheBoxsClock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	b := Box{Root: filepath.Join(dir, "inbox"), Tmp: filepath.Join(dir, "tmp"), Now: func() time.Time { return at }}
	if err := os.MkdirAll(b.Tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Enqueue(guard.Message{ID: "m1", Text: "x"}, 0, at); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteStatus(Status{ID: "m1", State: StateSubmitting}); err != nil {
		t.Fatal(err)
	}
	if st, err := b.ReadStatus("m1"); err != nil || !st.UpdatedAt.Equal(at) {
		t.Fatalf("updated_at %s (%v), want the box's clock %s", st.UpdatedAt, err, at)
	}
	// A status file that cannot be read sets its entry aside, ended now.
	if err := os.WriteFile(filepath.Join(b.StatusDir(), "m1.toml"), []byte("not = [toml"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := b.View()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range v.Open {
		if e.Msg.ID == "m1" {
			found = true
			if e.SetAside == "" || !e.Status.EndedAt.Equal(at) {
				t.Fatalf("set aside %q, ended %s, want the box's clock %s", e.SetAside, e.Status.EndedAt, at)
			}
		}
	}
	if !found {
		t.Fatal("m1 is not in the view")
	}
}
