package seat_test

// State files under hostile content: a message file that is a symlink, a
// FIFO, 2 GB of nothing or garbage is set aside as a failed message (reason
// unreadable) and the rest of the queue runs; listings still answer; the
// append logs refuse a planted link.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// plantEntries writes hostile files where `seat send` stores messages, each
// under a valid message id, and returns the ids.
func plantEntries(t *testing.T, s state.Seat) []string {
	t.Helper()
	if err := os.MkdirAll(s.MsgsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(victim, []byte(`{"id":"bad-link","text":"read through a link"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(path string) error{
		"bad-garbage": func(p string) error { return os.WriteFile(p, []byte("\x00\xffnot json{{{"), 0o600) },
		"bad-link":    func(p string) error { return os.Symlink(victim, p) },
		"bad-fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"bad-huge": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(2 << 30) // sparse: no disk, 2 GB by its size
		},
	}
	var ids []string
	for id, mk := range plant {
		if err := mk(filepath.Join(s.MsgsDir(), id+".json")); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestUnreadableInboxEntriesAreSetAsideAndTheQueueRuns(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "hostile")
	h.Send("before", "stored before the hostile files")
	bad := plantEntries(t, h.Seat())
	// A stored message whose status file is 0 bytes (a crash between create
	// and write on some filesystems, or a person's `: >`): it decoded to a
	// zero record that no reader called failed and the driver never moved.
	h.Send("bad-empty-status", "its status is truncated")
	if err := os.MkdirAll(h.Seat().StatusDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.Seat().StatusDir(), "bad-empty-status.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad = append(bad, "bad-empty-status")

	// A listing with no driver: every entry shown, the bad ones as failed.
	r := h.Run("seat", "inbox", h.Name)
	if r.Code != 0 {
		t.Fatalf("seat inbox over hostile entries: %s", r)
	}
	for _, id := range bad {
		if !strings.Contains(r.Stdout, id) {
			t.Errorf("seat inbox does not list %s:\n%s", id, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "before") {
		t.Errorf("seat inbox lost the good message:\n%s", r.Stdout)
	}

	h.Start()
	h.Send("after", "stored after them")
	h.WaitFinal(20*time.Second, append([]string{"before", "after"}, bad...)...)
	for _, id := range []string{"before", "after"} {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			t.Errorf("%s is %s (%s), want processed", id, st.State, st.Detail)
		}
	}
	for _, id := range bad {
		st := h.Status(id)
		if st.State != inbox.StateFailed || st.Reason != inbox.ReasonUnreadable || st.Detail == "" {
			t.Errorf("%s: %+v, want failed %s with the reason in its detail", id, st, inbox.ReasonUnreadable)
		}
	}
	if turns := h.ModelTurns(); turns["before"] != 1 || turns["after"] != 1 || len(turns) != 2 {
		t.Errorf("model turns %v, want exactly before and after once", turns)
	}
	if st := h.Status("bad-huge"); !strings.Contains(st.Detail, "2147483648 bytes") {
		t.Errorf("the 2 GB entry's detail does not say its size: %q", st.Detail)
	}
	if !strings.Contains(h.DriverLog(), "set aside as failed") {
		t.Error("driver.log does not say it set the entries aside")
	}
	if r := h.Run("status", h.Name); r.Code != 0 {
		t.Errorf("status over hostile entries: %s", r)
	}
}

func TestHostileSeatTomlAnswersAtOnce(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(path string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"huge": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(2 << 30)
		},
		"garbage": func(p string) error { return os.WriteFile(p, []byte("\x00\x01[[[ = "), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			h := seattest.New(t, "bad-"+name)
			cfg := h.Seat().ConfigPath()
			if err := os.Remove(cfg); err != nil {
				t.Fatal(err)
			}
			if err := plant(cfg); err != nil {
				t.Fatal(err)
			}
			// status reads every seat's seat.toml; a FIFO there used to be a
			// read that never returns, 2 GB one that fills memory.
			r := h.Run("status", h.Name)
			if !strings.Contains(r.Stdout+r.Stderr, "seat.toml") {
				t.Errorf("status does not name the bad seat.toml: %s", r)
			}
			if r := h.Run("seat", "start", h.Name); r.Code != 2 || !strings.Contains(r.Stderr, "seat.toml") {
				t.Errorf("seat start with a %s seat.toml: want exit 2 naming it, got %s", name, r)
			}
		})
	}
}

func TestDriverLogSymlinkIsRefused(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "loglink")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, h.Seat().DriverLogPath()); err != nil {
		t.Fatal(err)
	}
	r := h.Run("seat", "start", h.Name)
	if r.Code == 0 {
		t.Fatalf("seat start wrote its log through a planted symlink: %s", r)
	}
	if !strings.Contains(r.Stderr, "symlink") {
		t.Errorf("seat start does not say why: %s", r)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Fatalf("the link's target was written: %q", got)
	}
}

func TestListingsEscapeControlAndBidiCharacters(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "escapes")
	// Board text may carry a bidi override (the door refuses only control
	// bytes); a same-user process can write anything into a status file.
	h.Send("rlo", "invoice\u202efdp.exe please")
	st := inbox.Status{ID: "rlo", State: inbox.StateFailed, Reason: inbox.ReasonWorkError,
		Detail: "harness said \x1b[2J\x1b]0;pwned\x07", EndedAt: time.Now().UTC()}
	if err := h.Seat().WriteStatus(st); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"seat", "inbox", h.Name}, {"seat", "show", h.Name, "rlo"}} {
		r := h.Run(args...)
		if r.Code != 0 {
			t.Fatalf("%v: %s", args, r)
		}
		if strings.ContainsAny(r.Stdout, "\x1b\x07\u202e") {
			t.Errorf("%v printed a raw control or bidi character:\n%q", args, r.Stdout)
		}
		if !strings.Contains(r.Stdout, `invoice\u202efdp.exe`) {
			t.Errorf("%v does not show the override escaped:\n%s", args, r.Stdout)
		}
	}
	if r := h.Run("seat", "show", h.Name, "rlo"); !strings.Contains(r.Stdout, `\x1b[2J`) {
		t.Errorf("seat show does not show the detail's escape escaped:\n%s", r.Stdout)
	}
	// JSON stays exact.
	if r := h.Run("seat", "show", h.Name, "rlo", "--json"); !strings.Contains(r.Stdout, "\u202e") {
		t.Errorf("seat show --json lost the character: %s", r.Stdout)
	}
}
