package recover_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// modelOf returns the model that ran the turn carrying msg id (from the
// simulator's request log), "" when none did.
func modelOf(t *testing.T, h *seattest.Harness, id string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(h.Seat().HarnessDir(), "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	model := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r struct {
			Kind, Model, Error string
			NewInput           string `json:"new_input"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Kind != "turn" || r.Error != "" {
			continue
		}
		if got, _, _, ok := guard.MatchHeader(r.NewInput); ok && got == id {
			model = r.Model
		}
	}
	return model
}

// A provider refusal is a wait, not a failure: the block is recorded per
// provider with the reset read from the refusal (the simulator's "resets in
// 10s"), the seat shows waiting-provider, another seat on the same provider
// waits too, recover reports the wait and counts nothing against either seat,
// and after the reset both submit again. The session is untouched.
func TestProviderRefusalIsAVisibleSharedWait(t *testing.T) {
	t.Parallel()
	a := newSeat(t, "refused")
	b := sibling(t, a, "neighbour")
	a.Start()
	b.Start()
	a.Send("first", "before the limit")
	a.WaitFinal(wait, "first")
	sessBefore := a.Session()
	// 10 s: the sweeps and the heartbeat check below must fall inside the
	// wait. With 2 s, a CI run under the whole suite's load (2026-12-04) read
	// the heartbeat after the wait had ended, on the re-probe (submitting).
	a.Send("limited", "[sim:429 reset=in 10s] please")
	var blk state.Block
	a.WaitFor("the provider block", wait, func() bool {
		bs, err := outage.ReadBlocks(a.Home)
		var ok bool
		blk, ok = bs["sim"]
		return err == nil && ok
	})
	if !blk.Parsed || blk.Seat != "refused" || blk.Error != "rate_limit" || time.Until(blk.Until) > 10*time.Second {
		t.Fatalf("block: %+v", blk)
	}
	b.Send("other", "the neighbour's message, on the same provider")

	rep, res := sweep(t, a)
	ra := seatIn(t, rep, "refused")
	if ra.Verdict != recover.OK || !strings.Contains(ra.Waiting, "provider sim") || res.Code != 0 {
		t.Fatalf("a seat in a provider wait: %+v (exit %d)", ra, res.Code)
	}
	if len(rep.Providers) != 1 || rep.Providers[0].Provider != "sim" || strings.Join(rep.Providers[0].Seats, ",") != "neighbour,refused" {
		t.Fatalf("providers in the report: %+v", rep.Providers)
	}
	if text := a.Run("recover", "--dry-run"); !strings.Contains(text.Stdout, "provider sim: rate_limit until") {
		t.Fatalf("the wait is not printed: %s", text)
	}
	if hb, err := a.Seat().HeartbeatFile().Read(); err != nil || hb.Phase != state.PhaseProvider {
		t.Fatalf("refused seat's heartbeat: %+v %v", hb, err)
	}

	b.WaitFinal(wait, "other")
	var art state.Artifact
	if err := state.ReadState(filepath.Join(b.Seat().ArtifactsDir(), "other.1.toml"), &art); err != nil {
		t.Fatal(err)
	}
	if art.SentAt.Before(blk.Until) {
		t.Fatalf("the neighbour submitted at %s, before the shared block ended at %s", art.SentAt, blk.Until)
	}
	exactlyOnce(t, b, "other")
	a.WaitFor("the refused message to be tried again after the reset", wait, func() bool { return a.Status("limited").Attempts >= 2 })
	if st := a.Status("limited"); inbox.Final(st.State) {
		t.Fatalf("a refused message ended %s: a refusal is a wait, not a failure", st.State)
	}
	if s := a.Session(); s.ID != sessBefore.ID || s.Generation != sessBefore.Generation || s.Launches != sessBefore.Launches {
		t.Fatalf("the refusal touched the session: %+v → %+v", sessBefore, s)
	}
	for _, h := range []*seattest.Harness{a, b} {
		if _, err := h.Seat().RecoveryFile().Read(); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("seat %s has recovery.toml (%v): a refusal is never a means failure", h.Name, err)
		}
	}
}

// Pane text and a prompt that talk about limits, on a turn that succeeded,
// are not a refusal: detection runs only on a turn that already failed.
func TestLimitTalkOnAGoodTurnIsNotARefusal(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "talk")
	h.Start()
	h.Send("m1", "API Error: Request rejected (429) · rate limit reached, usage limit, overloaded (529): resets in 2h 5m\nexplain these errors")
	h.Send("m2", "and then this one")
	exactlyOnce(t, h, "m1", "m2")
	if _, err := outage.ReadBlocks(h.Home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state.ProvidersPath(h.Home)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a good turn recorded a provider block (%v)", err)
	}
	rep, _ := sweep(t, h)
	if r := seatIn(t, rep, "talk"); r.Verdict != recover.OK || r.Waiting != "" || len(rep.Providers) != 0 {
		t.Fatalf("report: %+v providers %+v", r, rep.Providers)
	}
}

// A two-rung seat whose top rung's provider is blocked (by another seat) runs
// on the second rung — the same session, resumed — and is back on the top
// rung at the reset, without needing good turns; nothing is persisted.
func TestBlockedRungRunsBelowAndComesBack(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "rungs",
		`[[ladder]]`, `name = "a"`, `model = "sim-a"`, `provider = "pa"`,
		`[[ladder]]`, `name = "b"`, `model = "sim-b"`, `provider = "pb"`)
	h.Start()
	s := h.Seat()
	if r, err := outage.LaunchedRung(s); err != nil || r != "a" {
		t.Fatalf("started on rung %q (%v), want a", r, err)
	}
	h.Send("m1", "on the top rung")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	now := time.Now()
	// Long enough that m2 runs and the sweep looks while the block holds, on a
	// loaded machine too (with 4 s a parallel run saw the block end first).
	until := now.Add(12 * time.Second)
	if err := outage.RecordBlock(h.Home, "pa", state.Block{Until: until, Since: now, Error: "rate_limit", Seat: "elsewhere", Parsed: true}, now); err != nil {
		t.Fatal(err)
	}
	h.Send("m2", "while pa is blocked")
	h.WaitFinal(wait, "m2")
	if m := modelOf(t, h, "m2"); m != "sim-b" {
		t.Fatalf("m2 ran on model %q, want sim-b (rung b)", m)
	}
	mid := h.Session()
	if mid.ID != before.ID || mid.Generation != before.Generation+1 || !strings.Contains(mid.Why, "rung b") {
		t.Fatalf("rung change: session %+v → %+v: want the same session, a new generation naming rung b", before, mid)
	}
	rep, _ := sweep(t, h)
	if r := seatIn(t, rep, "rungs"); r.Verdict != recover.OK || r.Rung != "b" || r.Floor != "" {
		t.Fatalf("report during the block: %+v", r)
	}
	h.WaitFor("the block to end", wait, func() bool { return time.Now().After(until) })
	h.Send("m3", "after the reset")
	h.WaitFinal(wait, "m3")
	if m := modelOf(t, h, "m3"); m != "sim-a" {
		t.Fatalf("m3 ran on model %q, want sim-a: back on the top rung at the reset", m)
	}
	if after := h.Session(); after.ID != before.ID || after.Generation != before.Generation+2 {
		t.Fatalf("session after the return: %+v", after)
	}
	if _, err := s.RecoveryFile().Read(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("recovery.toml was written (%v): the running rung is derived, never persisted", err)
	}
	exactlyOnce(t, h, "m1", "m2", "m3")
}

// A resume path that keeps failing (rung a's binary exits at start) is a means
// failure: after demote_after unverified recoveries the floor descends to rung
// b, persisted in recovery.toml, and the seat runs there on the same session;
// after climb_after good turns it climbs back to a.
func TestFailingResumePathDescendsAndClimbsBack(t *testing.T) {
	t.Parallel()
	broken := filepath.Join(t.TempDir(), "broken")
	wrapper := writeScript(t, "rung-a.sh", fmt.Sprintf("if [ -e %s ]; then echo 'rung a: the resume path is broken' >&2; exit 1; fi\nexec %s sim \"$@\"\n",
		broken, seattest.Binary(t)))
	h := newSeat(t, "ladder",
		`[recovery]`, `demote_after = 2`, `climb_after = 2`, `backoff = "1s"`,
		`[[ladder]]`, `name = "a"`, `command = "`+wrapper+`"`, `model = "sim-a"`,
		`[[ladder]]`, `name = "b"`, `model = "sim-b"`)
	h.Start()
	s := h.Seat()
	h.Send("m1", "on rung a")
	h.WaitFinal(wait, "m1")
	before := h.Session()
	if err := os.WriteFile(broken, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(before.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	seen := sweepUntil(t, h, "revived on rung b", func(r recover.SeatReport) bool { return okVerdict(r) && r.Floor == "b" })
	// The live driver relaunching it (harness-not-ready) or, once it gave up
	// after MaxLaunchFailures, the harness's own exits (harness-exits).
	if c := causes(seen); !c[recover.CauseNotReady] && !c[recover.CauseLaunchFails] {
		t.Fatalf("the failing resume path was not seen:\n%s", describe(seen))
	}
	rec, err := s.RecoveryFile().Read()
	if err != nil || rec.Floor != "b" || rec.Failures != 0 || !strings.Contains(rec.FloorWhy, "on rung a") {
		t.Fatalf("recovery.toml after the descent: %+v %v", rec, err)
	}
	h.WaitFor("the harness on rung b", wait, func() bool { r, _ := outage.LaunchedRung(s); return r == "b" })
	if sess := h.Session(); sess.ID != before.ID {
		t.Fatalf("the descent changed the session: %s → %s", before.ID, sess.ID)
	}
	h.Send("m2", "on rung b")
	h.WaitFinal(wait, "m2")
	if m := modelOf(t, h, "m2"); m != "sim-b" {
		t.Fatalf("m2 ran on %q, want sim-b", m)
	}

	// The path is repaired; after climb_after good turns the floor climbs back.
	os.Remove(broken)
	h.Send("m3", "a second good turn on b")
	h.WaitFinal(wait, "m3")
	rep, _ := sweep(t, h)
	if r := seatIn(t, rep, "ladder"); r.Verdict != recover.OK || !strings.Contains(r.Action, "raised the demotion floor from rung b to a") {
		t.Fatalf("after 2 good turns on b: %+v", r)
	}
	if rec, err := s.RecoveryFile().Read(); err != nil || rec.Floor != "" {
		t.Fatalf("recovery.toml after the climb: %+v %v", rec, err)
	}
	h.WaitFor("the harness back on rung a", wait, func() bool { r, _ := outage.LaunchedRung(s); return r == "a" })
	h.Send("m4", "back on rung a")
	h.WaitFinal(wait, "m4")
	if m := modelOf(t, h, "m4"); m != "sim-a" {
		t.Fatalf("m4 ran on %q, want sim-a", m)
	}
	if sess := h.Session(); sess.ID != before.ID {
		t.Fatalf("the ladder changed the session: %s → %s", before.ID, sess.ID)
	}
	exactlyOnce(t, h, "m1", "m2", "m3", "m4")
}
