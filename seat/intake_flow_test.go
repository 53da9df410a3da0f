package seat_test

// The inbox's contract with a running seat: ids are stored once whatever
// their state, delivery is driven by events (not by the heartbeat), the hook
// stays silent where its output would reach the model, and steering commands
// refuse callers inside a seat.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// duplicate sends an id already stored again and checks the door's answer:
// the same text is exit 0, "duplicate"; another text is a conflict (exit 6);
// the stored message is unchanged either way.
func duplicate(t *testing.T, h *seattest.Harness, id, when string) {
	t.Helper()
	before, err := h.Seat().ReadStored(id)
	if err != nil {
		t.Fatal(err)
	}
	r := h.RunStdin(before.Text, "seat", "send", h.Name, "--id", id)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != id+" duplicate: already stored" {
		t.Fatalf("%s: second send of %s with the same text: want exit 0 and a duplicate line, got %s", when, id, r)
	}
	r = h.RunStdin("a different text under the same id", "seat", "send", h.Name, "--id", id)
	if r.Code != 6 || r.Stdout != "" || !strings.Contains(r.Stderr, "conflict") {
		t.Fatalf("%s: send of %s with another text: want exit 6, a conflict, got %s", when, id, r)
	}
	if after, _ := h.Seat().ReadStored(id); after != before {
		t.Fatalf("%s: the duplicate changed the stored message: %+v", when, after)
	}
}

func TestDuplicateIDWhateverItsState(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "dupstate", seattest.TOML(`turn_ceiling = "1s"`))
	h.Send("q", "queued: no driver runs yet")
	duplicate(t, h, "q", "queued")

	h.Start()
	h.WaitFinal(10*time.Second, "q")
	duplicate(t, h, "q", "processed")

	h.Send("f", "[sim:hang] fails at the ceiling")
	h.WaitFinal(10*time.Second, "f")
	if st := h.Status("f"); st.State != inbox.StateFailed {
		t.Fatalf("message f is %s, want failed", st.State)
	}
	duplicate(t, h, "f", "failed")

	h.Send("last", "is processed; the duplicates were never delivered")
	h.WaitFinal(10*time.Second, "last")
	if turns := h.ModelTurns(); turns["q"] != 1 || turns["f"] != 1 || turns["last"] != 1 {
		t.Fatalf("model turns %v: a duplicate reached the model", turns)
	}
}

// TestIdleSeatDeliversOnEvent: with a heartbeat of an hour, nothing but the
// inbox watch can wake the driver, so a delivery within a minute proves it is
// event-driven (how fast it is, is a benchmark's question: docs/performance.md).
func TestIdleSeatDeliversOnEvent(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "idle", seattest.TOML(`heartbeat_interval = "1h"`))
	h.Start()
	h.WaitFor("the driver to be idle", 10*time.Second, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Phase == state.PhaseIdle
	})
	for i := range 3 {
		id := fmt.Sprintf("ping%d", i)
		h.Send(id, "are you there?")
		h.WaitFinal(time.Minute, id)
		if st := h.Status(id); st.State != inbox.StateProcessed {
			t.Fatalf("message %s is %s", id, st.State)
		}
	}
}

// TestMessagesSentAroundStartAreNotMissed sends before `seat start` and all
// through it, so some files land between the driver's watch and its first scan
// (watch first, then scan). The heartbeat is an hour: no rescan can hide a
// missed file.
func TestMessagesSentAroundStartAreNotMissed(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "around", seattest.TOML(`heartbeat_interval = "1h"`, `paste_settle = "20ms"`))
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("pre%d", i)
		h.Send(id, "sent before start")
		ids = append(ids, id)
	}
	done := make(chan struct{})
	var mu sync.Mutex
	var during []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			id := fmt.Sprintf("during%03d", i)
			if r := h.RunEnv(nil, "sent while start runs", "seat", "send", "around", "--id", id); r.Code != 0 {
				t.Errorf("send %s: %s", id, r)
				return
			}
			mu.Lock()
			during = append(during, id)
			mu.Unlock()
		}
	}()
	h.Start()
	close(done)
	wg.Wait()
	ids = append(ids, during...)
	h.Send("post", "sent after start")
	ids = append(ids, "post")
	t.Logf("%d messages sent while start ran", len(during))
	h.WaitFinal(30*time.Second, ids...)
	turns := h.ModelTurns()
	for _, id := range ids {
		if turns[id] != 1 {
			t.Errorf("message %s reached the model %d times, want 1", id, turns[id])
		}
	}
}

func TestHookPrintsNothingOnUserPromptSubmit(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "hook")
	payload := `{"hook_event_name":"UserPromptSubmit","session_id":"s-1","prompt_id":"p-1",` +
		`"prompt":"[pantty] msg=x nonce=0123456789ab mentions=0\nsomething the model must not see twice"}`
	before, _ := h.Seat().PendingEvents()
	r := h.RunStdin(payload, "hook", "--seat", "hook")
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Fatalf("pantty hook on UserPromptSubmit: want exit 0 and no output at all, got %s", r)
	}
	after, _ := h.Seat().PendingEvents()
	if len(after) != len(before)+1 {
		t.Fatalf("want exactly one new event file, got %d → %d", len(before), len(after))
	}
	ev, err := hookwire.ReadEvent(filepath.Join(h.Seat().EventsDir(), after[len(after)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != hookwire.EvUserPromptSubmit || ev.Fields.PromptID != "p-1" || !json.Valid(ev.Payload) {
		t.Fatalf("event recorded as %+v", ev)
	}
	// Set the hand-made event aside: a driver would take it for a person's turn
	// and wait for its end.
	if err := h.Seat().MarkSeen(ev.File); err != nil {
		t.Fatal(err)
	}

	// End to end: what a hook prints on UserPromptSubmit is injected into the
	// request; the simulator records it, and for pantty's turns it is empty.
	h.Start()
	h.Send("m", "hello")
	h.WaitFinal(10*time.Second, "m")
	for _, row := range h.Requests() {
		if row.Kind == "turn" && row.Injected != "" {
			t.Fatalf("text was injected into the model's request along with message %s: %q", row.MsgID(), row.Injected)
		}
	}
}

// TestHookFailsOpen: trouble before an event can be recorded — wiring pantty
// does not know, no seat, an unknown seat — never becomes an exit code the
// harness reads as a verdict (Claude Code blocks a prompt on exit 2), and an
// unknown seat gets no directory.
func TestHookFailsOpen(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "hook")
	payload := `{"hook_event_name":"UserPromptSubmit","session_id":"s-1","prompt_id":"p-1","prompt":"hi"}`
	for _, c := range []struct {
		name, want string
		args       []string
	}{
		{"unknown flag", "flag provided but not defined", []string{"hook", "--seat", "hook", "--no-such-flag"}},
		{"no seat", "no --seat given", []string{"hook"}},
		{"bad seat name", "bad input", []string{"hook", "--seat", "Bad Name"}},
		{"unknown seat", "unknown seat", []string{"hook", "--seat", "ghost"}},
		{"unknown seat, Codex model request", "unknown seat", []string{"hook", "--codex-hook", "--seat", "ghost"}},
		{"unknown seat, Codex notify", "unknown seat", []string{"hook", "--codex-notify", "--seat", "ghost", `{"type":"agent-turn-complete"}`}},
	} {
		stdin := payload
		if slices.Contains(c.args, "--codex-hook") {
			stdin = `{"hook_event_name":"PostModelRequest","session_id":"s-1","turn_id":"t-1"}`
		}
		r := h.RunStdin(stdin, c.args...)
		if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%s: want exit 0, nothing on stdout and one line naming %q on stderr, got %s", c.name, c.want, r)
		}
	}
	if _, err := os.Lstat(filepath.Join(h.Home, "seats", "ghost")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a hook for an unknown seat created its directory (%v)", err)
	}
	if evs, _ := h.Seat().PendingEvents(); len(evs) != 0 {
		t.Errorf("a refused hook call recorded events: %v", evs)
	}
}

// TestSteeringRefusedInsideSeat: a seat's model has a shell, so steering
// commands refuse a caller inside a seat — by the environment marker pantty
// sets for the harness, and by process ancestry when the marker is removed.
func TestSteeringRefusedInsideSeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "inside")
	other := state.Seat{}
	{
		s, err := state.Open(h.Home, "other")
		if err != nil {
			t.Fatal(err)
		}
		if err := seat.InitConfig(s, "sim", h.Work, nil); err != nil {
			t.Fatal(err)
		}
		other = s
	}
	h.Start()
	holder := h.Owner().Holder
	inside := map[string]string{launch.SeatEnv: "inside"}

	for _, args := range [][]string{
		{"seat", "command", "inside", "--", "/compact"},
		{"seat", "command", "inside", "--", "/clear"},
		{"seat", "compact", "inside"},
		{"seat", "cancel", "inside"},
		{"seat", "stop", "inside"},
		{"seat", "start", "inside", "--takeover", holder},
	} {
		r := h.RunEnv(inside, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "inside seat") {
			t.Errorf("pantty %s with %s set: want exit 2 refusing inside a seat, got %s", strings.Join(args, " "), launch.SeatEnv, r)
		}
	}
	if o, live, _ := h.Seat().LiveOwner(); !live || o.Holder != holder {
		t.Fatalf("a refused steering command changed the seat's owner")
	}

	r := h.RunEnv(inside, "hello from inside", "seat", "send", "other", "--id", "x1")
	if r.Code != 2 {
		t.Errorf("seat send to another seat from inside: want exit 2, got %s", r)
	}
	if ents, _ := os.ReadDir(other.MsgsDir()); len(ents) != 0 {
		t.Errorf("a refused send stored %d message(s) in the other seat", len(ents))
	}
	r = h.RunEnv(inside, "a note to myself", "seat", "send", "inside", "--id", "self1")
	if r.Code != 0 {
		t.Fatalf("seat send to its own seat from inside: want exit 0, got %s", r)
	}
	h.WaitFinal(10*time.Second, "self1")

	// Without the marker: the shell the seat's model runs is a child of the
	// harness, so the ancestry check still finds the seat.
	for i, c := range []string{
		fmt.Sprintf("%s --home %s seat command inside -- /compact", h.Bin, h.Home),
		fmt.Sprintf("echo smuggled | %s --home %s seat send other --id x2", h.Bin, h.Home),
	} {
		code := filepath.Join(h.Work, fmt.Sprintf("code%d", i))
		row := rawDispatch(t, h, fmt.Sprintf("!env -u %s %s >/dev/null 2>&1; echo $? > %s", launch.SeatEnv, c, code))
		if row.Kind != "shell" {
			t.Fatalf("the raw shell control did not run: %+v", row)
		}
		b, err := os.ReadFile(code)
		if err != nil || strings.TrimSpace(string(b)) != "2" {
			t.Errorf("from the seat's own shell, without %s: %q exited %q, want 2", launch.SeatEnv, c, b)
		}
	}
	for _, row := range h.Requests() {
		if row.Kind == "compact" {
			t.Fatalf("a command run from inside the seat compacted it")
		}
	}
	if ents, _ := os.ReadDir(other.MsgsDir()); len(ents) != 0 {
		t.Errorf("a send from inside stored %d message(s) in the other seat", len(ents))
	}
}

// TestPersonInterruptingTheirOwnTurnDoesNotWedgeTheSeat: a person at the pane
// types a prompt (the driver records a turn it did not cause and waits for its
// end) and then interrupts it with Escape — which fires no hook. The seat must
// not wait for that turn end forever: a board message sent afterwards is
// delivered.
func TestPersonInterruptingTheirOwnTurnDoesNotWedgeTheSeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "person", seattest.TOML(`heartbeat_interval = "1s"`))
	h.Start()
	h.PasteRaw("a person asks something slow [sim:hang]")
	h.WaitFor("the person's turn to run", 10*time.Second, func() bool {
		return strings.Contains(h.Screen(), "esc to interrupt")
	})
	if err := h.Tmux().SendKeys(t.Context(), h.Session().PaneID, "Escape"); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the person's turn to stop", 10*time.Second, func() bool {
		return !strings.Contains(h.Screen(), "esc to interrupt")
	})
	// The interrupted prompt is back in the box (which also shows that
	// seattest.Composer reads typed text); the person clears it.
	h.WaitFor("the interrupted prompt back in the composer", 5*time.Second, func() bool {
		box, ok := seattest.Composer(h.Screen())
		return ok && box == "a person asks something slow [sim:hang]"
	})
	if err := h.Tmux().SendKeys(t.Context(), h.Session().PaneID, "C-u"); err != nil {
		t.Fatal(err)
	}
	h.Send("after", "a board message after the person left")
	h.WaitFinal(15*time.Second, "after")
	if st := h.Status("after"); st.State != inbox.StateProcessed {
		t.Fatalf("message is %s (%s)", st.State, st.Reason)
	}
}
