package seattest

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// OutageTOML makes an outage's waits short in seat.toml: the driver re-probes
// after 1s, 2s, 2s, …, and a provider refusal without a reset after 15s. The
// refusal's wait is what the test's recover sweep must see: with 2s, a CI run
// under the full suite's load (2026-12-04, Codex billing) swept after the
// re-probe had begun and found the seat in-turn on its probe — rightly ok, but
// not the wait the test judges.
var OutageTOML = []string{`[recovery]`, `backoff = "1s"`, `backoff_max = "2s"`, `provider_reprobe = "15s"`}

// FaultyAPI is a loopback stand-in with fault modes (standinkit.Switch).
type FaultyAPI interface {
	SetFault(standinkit.Fault) error
}

// Answered counts, per pantty message id, the turn requests of a stand-in's
// log that it answered 200 (view gives a row's kind, new input and status):
// the turns that reached the model, counted from the stand-in's own log.
func Answered[R any](rows []R, view func(R) (kind, input string, status int)) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		kind, input, status := view(r)
		if id, _, _, ok := guard.MatchHeader(input); ok && kind == "turn" && status == 200 {
			n[id]++
		}
	}
	return n
}

// PlayOutage starts the seat, has one message processed, then plays fault
// against it (RunOutage) with three queued messages.
func (h *Harness) PlayOutage(api FaultyAPI, answered func() map[string]int, fault standinkit.Fault, class machine.Class, words string) {
	h.T.Helper()
	h.Start()
	first := h.Name + "-0"
	h.Send(first, "before the outage")
	h.WaitFinal(outageWait, first)
	if st := h.Status(first); st.State != inbox.StateProcessed {
		h.T.Fatalf("message %s before the outage: %s (%s: %s)", first, st.State, st.Reason, st.Detail)
	}
	h.RunOutage(Outage{
		Fault: func(on bool) {
			f := standinkit.FaultNone
			if on {
				f = fault
			}
			if err := api.SetFault(f); err != nil {
				h.T.Fatal(err)
			}
		},
		Answered: answered, Class: class, Words: words,
	}, h.Name+"-1", h.Name+"-2", h.Name+"-3")
}

// Outage is one outage of a real harness's model, played against its loopback
// stand-in: how to switch the fault, how to count what the model answered, and
// what the seat must say about it.
type Outage struct {
	// Fault switches the stand-in's fault on (true) or off.
	Fault func(on bool)
	// Answered counts, per pantty message id, the model turns the stand-in
	// answered (status 200) whose new input carried it: what reached the
	// model, from the stand-in's own request log.
	Answered func() map[string]int
	// Class is the failure class the seat must report (machine.ClassMeans,
	// machine.ClassProvider, machine.ClassTransient).
	Class machine.Class
	// Words are the harness's own words the heartbeat, status and recover
	// must name.
	Words string
}

// outageWait bounds each wait of an outage run: a real harness's turn, a
// probe after the backoff, a recover sweep.
const outageWait = 60 * time.Second

// SweepReport is the part of `pantty recover --json` the tests judge, read
// as JSON (the documented output) rather than through the recover package:
// seat/gates' own tests use this package, and recover imports seat/gates.
type SweepReport struct {
	Seats []SweptSeat `json:"seats"`
}

// SweptSeat is one seat's row of `pantty recover --json`.
type SweptSeat struct {
	Seat, Verdict, Cause, Reason, Waiting, Result string
	Class                                         machine.Class
	Launch                                        []string `json:"launch_problems"`
}

// RunOutage queues ids under the fault and checks that none fails, that the
// first is the only one tried (the queue is held behind it), that the heartbeat,
// `pantty status` and `pantty recover` name the outage in the harness's words
// (a means outage: recover says dead, class means, cause no-model-access;
// otherwise ok with the wait), then clears the fault and checks that every
// message is processed, each by exactly one answered model turn.
func (h *Harness) RunOutage(o Outage, ids ...string) {
	h.T.Helper()
	before := o.Answered()
	o.Fault(true)
	for _, id := range ids {
		h.Send(id, "during the outage: "+id)
	}
	h.WaitFor(string(o.Class)+" outage reported by the seat", outageWait, func() bool { return h.reportsOutage(o) })
	for i, id := range ids {
		st := h.Status(id)
		if inbox.Final(st.State) {
			h.T.Fatalf("message %s %s (%s: %s) during a %s outage\ndriver.log:\n%s", id, st.State, st.Reason, st.Detail, o.Class, h.DriverLog())
		}
		if i > 0 && st.Attempts != 0 {
			h.T.Fatalf("message %s was submitted (%d attempts) behind a held queue", id, st.Attempts)
		}
	}
	if st := h.Status(ids[0]); st.Attempts < 1 {
		h.T.Fatalf("message %s was never tried: %+v", ids[0], st)
	}
	if r := h.Run("status", h.Name); !strings.Contains(r.Stdout, o.Words) {
		h.T.Fatalf("pantty status does not name %q:\n%s", o.Words, r)
	}
	h.checkSweep(o)
	o.Fault(false)
	h.WaitFinal(outageWait, ids...)
	after := o.Answered()
	for _, id := range ids {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			h.T.Fatalf("message %s: %s (%s: %s) after the outage", id, st.State, st.Reason, st.Detail)
		}
		if n := after[id] - before[id]; n != 1 {
			h.T.Errorf("message %s: %d answered model turns, want exactly 1 (%v)", id, n, after)
		}
	}
	h.WaitFor("the seat to report the outage over", outageWait, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Fault == ""
	})
}

// reportsOutage reports whether the seat's records show the outage: the
// heartbeat's fault for means and transient, the provider block for a refusal.
func (h *Harness) reportsOutage(o Outage) bool {
	hb, err := h.Seat().HeartbeatFile().Read()
	if err != nil {
		return false
	}
	if o.Class != machine.ClassProvider {
		return hb.Fault == o.Class && strings.Contains(hb.FaultCause, o.Words)
	}
	bs, err := outage.ReadBlocks(h.Home)
	if err != nil {
		return false
	}
	for _, b := range bs {
		if strings.Contains(b.Error+": "+b.Text, o.Words) {
			return hb.Phase == state.PhaseProvider
		}
	}
	return false
}

// checkSweep runs `pantty recover --json` once and checks its verdict on the
// seat: dead (no-model-access, class means, the harness's words) for a means
// outage, ok with the wait in words otherwise. Nothing may be restarted.
func (h *Harness) checkSweep(o Outage) {
	h.T.Helper()
	r := h.Run("recover", "--json")
	var rep SweepReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		h.T.Fatalf("recover --json: %v: %s", err, r)
	}
	for _, s := range rep.Seats {
		if s.Seat != h.Name {
			continue
		}
		want := s.Verdict == "ok" && strings.Contains(s.Reason+s.Waiting, o.Words)
		if o.Class == machine.ClassMeans {
			want = s.Verdict == "dead" && s.Cause == "no-model-access" && s.Class == machine.ClassMeans && strings.Contains(s.Reason, o.Words) && r.Code == 1
		}
		if !want {
			h.T.Fatalf("recover on a %s outage: %+v (exit %d)", o.Class, s, r.Code)
		}
		return
	}
	h.T.Fatalf("recover did not report seat %s: %s", h.Name, r)
}
