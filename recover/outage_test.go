package recover_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A credential outage (the simulator's StopFailure authentication_failed, in
// Claude Code 2.1.328's words) fails no message: the failed one goes back to
// the head of the queue, the rest wait behind it, the heartbeat publishes the
// fault, and recover reports the seat dead (class means, cause no-model-access)
// in the harness's words without restarting anything. When the key works again
// the held message is the probe, and every message is processed exactly once.
func TestCredentialOutageHoldsTheQueueAndIsDead(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "nokey", `[recovery]`, `backoff = "1s"`, `backoff_max = "2s"`)
	h.Start()
	h.Send("m0", "before the outage")
	h.WaitFinal(wait, "m0")
	sess := h.Session()
	// The outage lasts a fixed time from now (the simulator reads it from the
	// text). It must outlast m1's delivery even under load: CI once took 6 s
	// to deliver m1 (a lost Enter, retried after submit_timeout), and the
	// 6 s outage was over before m1 reached the model.
	until := time.Now().Add(outageFor).Unix()
	h.Send("m1", fmt.Sprintf("[sim:auth][sim:until=%d] the first message of the outage", until))
	h.Send("m2", "second")
	h.Send("m3", "third")
	var hb state.Heartbeat
	h.WaitFor("the heartbeat to publish the means fault", wait, func() bool {
		var err error
		hb, err = h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Fault == machine.ClassMeans
	})
	const words = "cannot authenticate: Invalid API key · Fix external API key"
	if hb.FaultCause != words {
		t.Fatalf("heartbeat fault cause %q, want %q", hb.FaultCause, words)
	}
	rep, res := sweep(t, h)
	r := seatIn(t, rep, "nokey")
	if r.Verdict != recover.Dead || r.Cause != recover.CauseNoModel || r.Class != machine.ClassMeans ||
		!strings.Contains(r.Reason, words) || res.Code != 1 || strings.Contains(r.Action, "started driver") {
		t.Fatalf("a seat that cannot authenticate: %+v (exit %d)", r, res.Code)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if st := h.Status(id); inbox.Final(st.State) && st.State != inbox.StateProcessed {
			t.Fatalf("message %s %s (%s: %s) during a credential outage", id, st.State, st.Reason, st.Detail)
		}
	}
	if st := h.Status("m2"); st.Attempts != 0 && st.State != inbox.StateProcessed {
		t.Fatalf("m2 was submitted behind a held queue: %+v", st)
	}
	onceAfterOutage(t, h, "m0", "m1", "m2", "m3")
	if st := h.Status("m1"); st.Attempts < 2 {
		t.Fatalf("m1 went through in %d attempt(s): the outage was never seen", st.Attempts)
	}
	rep, _ = sweep(t, h)
	if r := seatIn(t, rep, "nokey"); r.Verdict != recover.OK {
		t.Fatalf("after the outage: %+v", r)
	}
	if hb, err := h.Seat().HeartbeatFile().Read(); err != nil || hb.Fault != "" {
		t.Fatalf("heartbeat after the outage: %+v %v", hb, err)
	}
	if s := h.Session(); s.ID != sess.ID || s.Launches != sess.Launches {
		t.Fatalf("the outage touched the session: %+v → %+v", sess, s)
	}
}

// A credential outage is a means failure, so the ladder's rule applies: with
// demote_after = 1 the first sweep that sees it lowers the floor, the live
// driver follows it to the next rung on the same session, and the messages
// are still processed once.
func TestCredentialOutageDescendsTheLadder(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "nokey-ladder",
		`[recovery]`, `demote_after = 1`, `backoff = "1s"`, `backoff_max = "2s"`,
		`[[ladder]]`, `name = "a"`, `model = "sim-a"`,
		`[[ladder]]`, `name = "b"`, `model = "sim-b"`, `provider = "spare"`)
	h.Start()
	sess := h.Session()
	until := time.Now().Add(outageFor).Unix() // see TestCredentialOutageHoldsTheQueueAndIsDead
	h.Send("m1", fmt.Sprintf("[sim:auth][sim:until=%d] refused on every rung for a while", until))
	h.Send("m2", "behind it")
	h.WaitFor("the means fault", wait, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Fault == machine.ClassMeans
	})
	rep, _ := sweep(t, h)
	if r := seatIn(t, rep, "nokey-ladder"); r.Cause != recover.CauseNoModel || r.Floor != "b" {
		t.Fatalf("the sweep that saw the outage: %+v", r)
	}
	h.WaitFor("the harness on rung b", wait, func() bool { r, _ := outage.LaunchedRung(h.Seat()); return r == "b" })
	onceAfterOutage(t, h, "m1", "m2")
	if m := modelOf(t, h, "m2"); m != "sim-b" {
		t.Fatalf("m2 ran on %q, want sim-b", m)
	}
	if s := h.Session(); s.ID != sess.ID {
		t.Fatalf("the descent changed the session: %s → %s", sess.ID, s.ID)
	}
}

// outageFor is how long a scripted credential outage lasts from the send.
const outageFor = 20 * time.Second

// onceAfterOutage asserts that every message in ids was processed by exactly
// one model turn that the model answered (the turns refused during the outage
// reached the simulator but no model), counted from the simulator's request log
// and transcripts, never from pantty's records.
func onceAfterOutage(t *testing.T, h *seattest.Harness, ids ...string) {
	t.Helper()
	h.WaitFinal(wait, ids...)
	answered, rep := h.AnsweredTurns(), replies(t, h)
	for _, id := range ids {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			t.Errorf("message %s is %s (%s %s), want processed", id, st.State, st.Reason, st.Detail)
		}
		if answered[id] != 1 || rep[id] != 1 {
			t.Errorf("message %s: %d answered model turns, %d replies; want exactly 1", id, answered[id], rep[id])
		}
	}
}

// A backoff earned by no-model-access sweeps (the live driver re-probed;
// recover restarted nothing) does not hold back the revival of a driver
// that is gone since: recovery.toml says the last unverified attempt was
// no-model-access with its next attempt an hour away, the driver is
// killed, and the next sweep starts a new one at once. A backoff after a
// failed revival still holds (TestAGateThatFailsStopsTheRevival).
func TestAModelAccessBackoffDoesNotDelayADriverRevival(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "mback")
	h.Start()
	rec := state.Recovery{Failures: 2, MeansFailures: 2, LastCause: recover.CauseNoModel,
		NextAttempt: time.Now().Add(time.Hour).UTC(), LastAt: time.Now().UTC()}
	if err := h.Seat().RecoveryFile().Write(rec); err != nil {
		t.Fatal(err)
	}
	h.KillDriver()
	rep, _ := sweep(t, h)
	r := seatIn(t, rep, "mback")
	if r.Cause != recover.CauseDriverGone || !strings.Contains(r.Action, "started driver") || !strings.HasPrefix(r.Result, "verified") {
		t.Fatalf("a driver gone after a model-access backoff: %+v", r)
	}
}
