package recover_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A killed driver is a dead seat; recover starts a driver, which adopts the
// live harness (same pane, same session), and the message queued meanwhile is
// processed once. --dry-run first says so and changes nothing.
func TestDriverKilled(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "killed")
	h.Start()
	h.Send("m1", "before the kill")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver to die", wait, func() bool { return !alive(o.PID) })
	// A process the driver was forking when it died can hold owner.lock's
	// descriptor for a moment after; recover rightly says unknown then.
	if !seat.WaitFree(h.Seat(), wait) {
		t.Fatal("owner.lock still held after the driver died")
	}
	h.Send("m2", "sent while no driver runs")

	rep, _ := sweep(t, h, "--dry-run")
	dr := seatIn(t, rep, "killed")
	if dr.Verdict != recover.Dead || dr.Cause != recover.CauseDriverGone || !strings.Contains(dr.Action, "start a driver") || rep.Code != 1 {
		t.Fatalf("dry run: %+v (exit %d)", dr, rep.Code)
	}
	if o2, _ := h.Seat().OwnerFile().Read(); o2.Holder != o.Holder {
		t.Fatalf("the dry run changed owner.toml: %s", o2)
	}
	if _, err := os.Stat(state.HealthPath(h.Seat())); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote health.toml (%v)", err)
	}

	seen := sweepUntil(t, h, "revived", okVerdict)
	if !causes(seen)[recover.CauseDriverGone] || !strings.HasPrefix(seen[0].Result, "verified") {
		t.Fatalf("the first sweep did not revive a dead driver:\n%s", describe(seen))
	}
	after := h.Session()
	if after.ID != before.ID || after.PanePID != before.PanePID || after.Generation != before.Generation {
		t.Fatalf("session changed: before %+v, after %+v (the new driver must adopt the live harness)", before, after)
	}
	exactlyOnce(t, h, "m1", "m2")
	if r, err := h.Seat().RecoveryFile().Read(); err != nil || r.Failures != 0 || r.Revived != 1 || r.LastCause != recover.CauseDriverGone {
		t.Fatalf("recovery.toml: %+v %v", r, err)
	}
	if hl, err := state.ReadHealth(h.Seat()); err != nil || hl.Verdict != recover.OK {
		t.Fatalf("health.toml: %+v %v", hl, err)
	}
}

// A driver whose loop no longer runs inside a live process goes stale;
// recover kills that process — its identity matches owner.toml — waits for the
// lock and starts a replacement, which adopts the harness and delivers what
// was sent meanwhile exactly once. The wedge is a real one: the driver is
// stopped (SIGSTOP), so it lives on, holds its lock and answers nothing; the
// shipped driver has no hook that blocks its loop.
func TestWedgedLoopIsReplaced(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "wedged")
	h.Start()
	h.Send("m1", "before the wedge")
	h.WaitFinal(wait, "m1")
	o := h.Owner()
	killOnCleanup(t, o.PID)
	if err := syscall.Kill(o.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	h.Send("m2", "sent to a wedged loop")
	seen := sweepUntil(t, h, "revived", func(r recover.SeatReport) bool { return okVerdict(r) && r.Session != "" && !alive(o.PID) })
	if !causes(seen)[recover.CauseWedged] {
		t.Fatalf("a wedged loop was not classified wedged:\n%s", describe(seen))
	}
	for _, r := range seen {
		if r.Cause == recover.CauseWedged && r.Result != "" && !strings.Contains(r.Action, "start time matched owner.toml") {
			t.Fatalf("the wedged driver was not killed by identity: %+v", r)
		}
	}
	if h.Owner().Holder == o.Holder {
		t.Fatal("the replacement driver has the old holder id")
	}
	exactlyOnce(t, h, "m1", "m2")
}

// A stopped driver (SIGSTOP) is alive with a stale heartbeat. It is killed only
// when its pid and start time match owner.toml: with the record naming another
// start time, recover reports unknown and leaves it alone; with the record
// right, it kills and replaces it.
func TestStoppedDriverKilledOnlyOnIdentity(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "stopped")
	h.Start()
	s := h.Seat()
	o := h.Owner()
	killOnCleanup(t, o.PID)
	if err := syscall.Kill(o.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("a stale heartbeat", wait, func() bool {
		hb, err := s.HeartbeatFile().Read()
		return err == nil && time.Since(hb.At) > 3500*time.Millisecond
	})
	forged := o
	forged.PIDStart++
	if err := s.OwnerFile().Write(forged); err != nil {
		t.Fatal(err)
	}
	rep, res := sweep(t, h)
	sr := seatIn(t, rep, "stopped")
	if sr.Verdict != recover.Unknown || sr.Cause != recover.CauseLockHolder || res.Code != 4 {
		t.Fatalf("with a record that does not match the process: %+v (exit %d)", sr, res.Code)
	}
	if !alive(o.PID) {
		t.Fatal("recover killed a process whose identity did not match owner.toml")
	}
	if hl, err := state.ReadHealth(s); err != nil || hl.Verdict != recover.Unknown {
		t.Fatalf("unknown was not recorded: %+v %v", hl, err)
	}
	if err := s.OwnerFile().Write(o); err != nil {
		t.Fatal(err)
	}
	seen := sweepUntil(t, h, "revived", okVerdict)
	if !causes(seen)[recover.CauseWedged] || alive(o.PID) {
		t.Fatalf("the stopped driver was not killed and replaced:\n%s", describe(seen))
	}
	h.Send("m1", "after the replacement")
	exactlyOnce(t, h, "m1")
}

// A killed harness is relaunched by the live driver on the same session, even
// in the middle of a turn (the lost turn is resubmitted once, marked); recover
// sees the seat back to ok.
func TestHarnessKilled(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "harness")
	h.Start()
	h.Send("m1", "before the kill")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	h.Send("m2", "[sim:slow=2s] in flight when the harness dies")
	h.WaitState("m2", inbox.StateSubmitted, wait)
	if err := syscall.Kill(before.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.Send("m3", "after the kill")
	sweepUntil(t, h, "ok with a new harness", func(r recover.SeatReport) bool {
		return okVerdict(r) && h.Session().PanePID != before.PanePID
	})
	after := h.Session()
	if after.ID != before.ID || !after.Resumed || after.Generation != before.Generation {
		t.Fatalf("session: before %+v, after %+v: want the same session resumed", before, after)
	}
	exactlyOnce(t, h, "m1", "m2", "m3")
}

// A harness stopped mid-turn (SIGSTOP) cannot be cancelled: the driver's
// ceiling cancel fails, recover sees the turn stuck past its ceiling, removes
// the driver, kills the harness and starts a driver that resumes the session;
// the lost turn is resubmitted once (marked) and processed.
//
// tmux continues a stopped pane process at once (SIGCONT from its SIGCHLD
// handler), so the harness runs under a shell that does not exec it, and the
// harness process itself is stopped.
func TestHarnessStoppedMidTurn(t *testing.T) {
	t.Parallel()
	wrapper := writeScript(t, "sim-child.sh", seattest.Binary(t)+` sim "$@"`+"\n")
	h := newSeat(t, "midturn", `turn_ceiling = "3s"`, `command = "`+wrapper+`"`)
	h.Start()
	h.Send("m1", "before")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	h.Send("m2", "[sim:slow=1500ms] the harness is stopped during this turn")
	h.WaitState("m2", inbox.StateSubmitted, wait)
	// Stop it once the turn shows on screen: a harness frozen before it drew the
	// busy line looks idle to the pane (see the report on cancelTurn).
	h.WaitFor("the turn on screen", wait, func() bool { return strings.Contains(h.Screen(), "esc to interrupt") })
	pids := h.HarnessPIDs()
	if len(pids) != 1 || pids[0] == before.PanePID {
		t.Fatalf("harness pids %v (pane pid %d): want the one simulator child", pids, before.PanePID)
	}
	harness := pids[0]
	killOnCleanup(t, harness)
	if err := syscall.Kill(harness, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	seen := sweepUntil(t, h, "revived past the stuck turn", func(r recover.SeatReport) bool {
		return okVerdict(r) && !alive(harness) && h.Status("m2").State == inbox.StateProcessed
	})
	if !causes(seen)[recover.CauseTurnStuck] {
		t.Fatalf("the stuck turn was never classified turn-stuck:\n%s", describe(seen))
	}
	after := h.Session()
	if after.ID != before.ID || !after.Resumed || after.PanePID == before.PanePID {
		t.Fatalf("session: before %+v, after %+v: want the same session resumed in a new harness", before, after)
	}
	h.Send("m3", "after")
	exactlyOnce(t, h, "m1", "m2", "m3")
	if st := h.Status("m2"); st.Resubmits != 1 {
		t.Fatalf("m2: %d resubmissions, want the one marked resubmission of the lost turn", st.Resubmits)
	}
}

// A killed tmux server is recreated by the driver with the same session;
// recover sees it dead while it is gone and ok once it is back.
func TestTmuxServerKilled(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "server")
	h.Start()
	h.Send("m1", "before")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Tmux().KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	h.Send("m2", "after the server died")
	sweepUntil(t, h, "ok on a new server", func(r recover.SeatReport) bool {
		return okVerdict(r) && h.Session().PanePID != before.PanePID
	})
	if after := h.Session(); after.ID != before.ID || !after.Resumed || after.Socket != before.Socket {
		t.Fatalf("session: before %+v, after %+v", before, after)
	}
	exactlyOnce(t, h, "m1", "m2")
}

// A directory where a state file should be is unreadable: the verdict is
// unknown, recorded and printed, exit 4, and nothing is done to the seat. Once
// the file is readable again the seat is ok.
func TestUnreadableStateIsUnknown(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "unread")
	h.Start()
	s := h.Seat()
	o, sess := h.Owner(), h.Session()
	hbPath := s.HeartbeatPath()
	h.WaitFor("heartbeat.toml replaced by a directory", wait, func() bool {
		os.Remove(hbPath)
		return os.Mkdir(hbPath, 0o700) == nil
	})
	rep, res := sweep(t, h)
	sr := seatIn(t, rep, "unread")
	if sr.Verdict != recover.Unknown || sr.Cause != recover.CauseUnreadable || !strings.Contains(sr.Reason, "heartbeat.toml") || res.Code != 4 {
		t.Fatalf("unreadable heartbeat: %+v (exit %d)", sr, res.Code)
	}
	text := h.Run("recover")
	if text.Code != 4 || !strings.Contains(text.Stdout, "unknown") || !strings.Contains(text.Stdout, "heartbeat.toml") {
		t.Fatalf("unknown is not printed: %s", text)
	}
	if hl, err := state.ReadHealth(s); err != nil || hl.Verdict != recover.Unknown {
		t.Fatalf("health.toml: %+v %v", hl, err)
	}
	if o2, sess2 := h.Owner(), h.Session(); o2 != o || sess2.PanePID != sess.PanePID || !alive(o.PID) {
		t.Fatalf("recover acted on an unknown seat: owner %s → %s, pane pid %d → %d", o, o2, sess.PanePID, sess2.PanePID)
	}
	if _, err := s.RecoveryFile().Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("recovery.toml: %v", err)
	}
	os.Remove(hbPath)
	// The driver writes heartbeat.toml again on its next tick. A sweep before
	// that finds no heartbeat from a driver that took the seat long ago and
	// rightly calls it wedged (CI once replaced the driver so): the test is
	// about a readable file, so it waits for one.
	h.WaitFor("the driver's next heartbeat", wait, func() bool {
		hb, err := s.HeartbeatFile().Read()
		return err == nil && hb.Holder == o.Holder
	})
	sweepUntil(t, h, "ok again", okVerdict)
	if h.Owner() != o {
		t.Fatal("the driver was replaced")
	}

	// A corrupt owner.toml that still decodes: a negative pid_start wraps
	// into a uint64 (BurntSushi/toml). Before recover read owner.toml through
	// its binding it took the wrapped number for a start time (the verdict was
	// unknown only because the lock's holder then matched no record: "it
	// records pid N, start 18446744073709551615"); now the record itself is
	// reported unreadable, naming the field.
	orig, err := os.ReadFile(s.OwnerPath())
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`(?m)^pid_start = \d+$`).ReplaceAll(orig, []byte("pid_start = -1"))
	if bytes.Equal(bad, orig) {
		t.Fatalf("owner.toml has no pid_start line:\n%s", orig)
	}
	if err := os.WriteFile(s.OwnerPath(), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, res = sweep(t, h)
	if sr := seatIn(t, rep, "unread"); sr.Verdict != recover.Unknown || !strings.Contains(sr.Reason, "pid_start") || res.Code != 4 {
		t.Fatalf("owner.toml with a negative pid_start: %+v (exit %d)", sr, res.Code)
	}
	if err := os.WriteFile(s.OwnerPath(), orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if o2 := h.Owner(); o2 != o || !alive(o.PID) {
		t.Fatalf("recover acted on a seat whose owner.toml it could not believe: %s → %s", o, o2)
	}
}

// Capability, not presence: with a fresh heartbeat, a live pane and a live
// driver, a message that waits past its ceiling while nothing runs for it (here
// the driver waits on a person's turn that never ends) makes the seat dead "no
// capability"; recover replaces the driver and restarts the harness on the same
// session, and the message is processed.
func TestNoCapabilityDespiteFreshHeartbeat(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "nocap", `turn_ceiling = "3s"`)
	h.Start()
	h.Send("m1", "before")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	h.PasteRaw("[sim:hang] a person typed this and it never ends")
	// Send m2 only once the driver has taken the person's prompt in (its
	// UserPromptSubmit consumed): a message pasted while that prompt is still on
	// its way is the driver race described in the report, not this test.
	h.WaitFor("the driver to see the person's prompt", wait, func() bool {
		names, _ := h.Seat().SeenEvents()
		for _, n := range names {
			if strings.HasSuffix(n, "-"+hookwire.EvUserPromptSubmit+".json") {
				if ev, err := hookwire.ReadEvent(filepath.Join(h.Seat().SeenDir(), n)); err == nil && strings.Contains(ev.Fields.Prompt, "a person typed") {
					return true
				}
			}
		}
		return false
	})
	h.Send("m2", "waits behind the person's turn")
	seen := sweepUntil(t, h, "m2 processed", func(r recover.SeatReport) bool {
		return okVerdict(r) && h.Status("m2").State == inbox.StateProcessed
	})
	nocap := false
	for _, r := range seen {
		if r.Cause == recover.CauseNoCapability {
			nocap = true
			if r.Verdict != recover.Dead || !strings.Contains(r.Reason, "m2") {
				t.Fatalf("no-capability report: %+v", r)
			}
		}
		if r.Cause == recover.CauseWedged || r.Cause == recover.CauseHarnessDown {
			t.Fatalf("the heartbeat and the pane were fine, yet: %+v", r)
		}
	}
	if !nocap {
		t.Fatalf("never classified no-capability:\n%s", describe(seen))
	}
	if after := h.Session(); after.ID != before.ID || after.PanePID == before.PanePID {
		t.Fatalf("session: before %+v, after %+v: want the same session in a restarted harness", before, after)
	}
	exactlyOnce(t, h, "m1", "m2")
}

// A revival is a start, so the gates `seat start` applies apply to it: with a
// registry in which the simulator's compaction gate fails (a row that expired,
// an unmeasured upgrade), recover leaves the dead seat dead and says why,
// nothing is killed or started, and the attempt counts toward its backoff.
func TestAGateThatFailsStopsTheRevival(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "gated")
	h.Start()
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver to die", wait, func() bool { return !alive(o.PID) })
	// The lock can outlive the driver's pid for a moment (then the seat is
	// unknown, not dead, and nothing is acted on): wait until it is free.
	if !seat.WaitFree(h.Seat(), wait) {
		t.Fatal("owner.lock stayed held after the driver died")
	}

	shipped, err := os.ReadFile(filepath.Join("..", "seat", "gates", "registry.toml"))
	if err != nil {
		t.Fatal(err)
	}
	const met = "[harness.compaction]\nstatus = \"met\"" // the first entry is the simulator's
	if !strings.Contains(string(shipped), met) {
		t.Fatal("the shipped registry no longer has the simulator's compaction row")
	}
	reg := filepath.Join(t.TempDir(), "registry.toml")
	if err := os.WriteFile(reg, []byte(strings.Replace(string(shipped), met, "[harness.compaction]\nstatus = \"unmet\"", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.RunEnv(map[string]string{"PANTTY_GATES_REGISTRY": reg}, "", "recover", "--json")
	var rep recover.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("recover --json: %v: %s", err, r)
	}
	s := seatIn(t, rep, "gated")
	if r.Code != 1 || s.Verdict != recover.Dead || !strings.Contains(s.Result, "not restarted") || !strings.Contains(s.Result, "compaction gate fails") {
		t.Fatalf("with a failing gate: exit %d, %+v; want the seat left dead, saying which gate", r.Code, s)
	}
	if _, live, _ := h.Seat().LiveOwner(); live {
		t.Fatal("a driver was started although the gate fails")
	}
	// The refused attempt counts as an unverified recovery: the next sweep backs
	// off before trying again (TestDriverKilled shows the revival itself).
	rep, _ = sweep(t, h)
	if s := seatIn(t, rep, "gated"); s.Verdict != recover.Dead || !strings.Contains(s.Action, "backoff after 1 unverified") {
		t.Fatalf("the sweep after a gate refusal: %+v; want it to back off", s)
	}
}
