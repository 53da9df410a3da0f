package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/proc"
)

// The faults the injector chooses among, uniformly.
const (
	fKillDriver   = "kill-driver"  // SIGKILL the driver; recover (cron) restarts it, the new driver adopts the harness
	fKillHarness  = "kill-harness" // SIGKILL the harness, mid-turn when one runs; the driver relaunches it on the same session
	fKillHook     = "kill-hook"    // SIGKILL a running `pantty hook` mid-write
	fStopDriver   = "stop-driver"  // SIGSTOP the driver 1–4s, then SIGCONT (a stale heartbeat: recover may replace it)
	fStopHarness  = "stop-harness" // SIGSTOP the harness 1–4s, then SIGCONT
	fKillTmux     = "kill-tmux"    // SIGKILL the seat's tmux server; the driver recreates it and relaunches on the same session
	fProvider429  = "provider-429" // a message the provider refuses (429, reset in 1s) for its first 3 seconds
	fOutageAuth   = "outage-auth"  // a credential outage (401, authentication_failed) for 3 seconds: the queue is held, nothing fails
	fCompact      = "compact"      // a full compaction cycle (`pantty seat compact`)
	fStopStart    = "stop-start"   // `seat stop`, then `seat start`
	fSecondStart  = "second-start" // `seat start` on a running seat: exit 0 "already running", naming the holder, nothing changed
	fDoubleStart  = "double-start" // two concurrent `seat start` on a stopped seat: one starts it, the other answers "already running" naming that driver; both exit 0
	revivalLimit  = 90 * time.Second
	faultDeadline = 2 * time.Minute
)

var faultKinds = []string{fKillDriver, fKillHarness, fKillHook, fStopDriver, fStopHarness, fKillTmux,
	fProvider429, fOutageAuth, fCompact, fStopStart, fSecondStart, fDoubleStart, fKillControl}

// lockAll marks every seat of rs as under a fault, or none of them when one
// already is.
func lockAll(rs []*seatRig) bool {
	for i, r := range rs {
		if !r.tryLock() {
			unlockAll(rs[:i])
			return false
		}
	}
	return true
}

func unlockAll(rs []*seatRig) {
	for _, r := range rs {
		r.unlock()
	}
}

// faultRec is what one injected fault did.
type faultRec struct {
	kind, seat string
	at         time.Time
	done       bool          // the fault was really delivered (a process found, a command run)
	note       string        // what happened, for the log
	violation  string        // a broken promise (a second start that was not refused, ...)
	revival    time.Duration // time to verified revival, when measured
	measured   bool
	revived    bool
}

// faultLog collects the faults.
type faultLog struct {
	mu   sync.Mutex
	recs []*faultRec
}

func (f *faultLog) add(r *faultRec) {
	f.mu.Lock()
	f.recs = append(f.recs, r)
	f.mu.Unlock()
}

// injector picks a fault and a free seat at random (seeded), every gap, until
// stop; each fault runs in its own goroutine so seats suffer concurrently, but
// one seat has one fault at a time (its revival is measured before the next).
func (w *world) injector(rng *rand.Rand, stop <-chan struct{}, gap func(*rand.Rand) time.Duration, l *ledger, fl *faultLog, wg *sync.WaitGroup) {
	n := 0
	for {
		select {
		case <-stop:
			return
		case <-time.After(gap(rng)):
		}
		kind := faultKinds[rng.Intn(len(faultKinds))]
		r := w.seats[rng.Intn(len(w.seats))]
		seed := rng.Int63()
		// A full state root is every seat's fault at once: it waits until no
		// seat has a fault in progress and holds them all while it lasts (a
		// stop during it rightly fails "intent could not be recorded", which
		// the stop's own check would count as a broken promise).
		hit := []*seatRig{r}
		if kind == fStateFull {
			hit = w.seats
		}
		if !lockAll(hit) {
			w.log.printf("fault %s on %s skipped: a seat is still recovering from the last fault", kind, r.name)
			continue
		}
		n++
		rec := &faultRec{kind: kind, seat: r.name, at: time.Now()}
		fl.add(rec)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer unlockAll(hit)
			w.fault(rec, r, rand.New(rand.NewSource(seed)), l, n)
			status := "ok"
			if rec.violation != "" {
				status = "VIOLATION: " + rec.violation
			}
			rev := ""
			if rec.measured {
				rev = fmt.Sprintf(", revived in %s", rec.revival.Round(10*time.Millisecond))
				if !rec.revived {
					rev = ", NOT revived within " + revivalLimit.String()
				}
			}
			w.log.printf("fault %-13s %s: %s%s [%s]", kind, r.name, rec.note, rev, status)
		}()
	}
}

func (w *world) fault(rec *faultRec, r *seatRig, rng *rand.Rand, l *ledger, n int) {
	s := w.seat(r)
	measure := func(since time.Time) {
		d, ok, why := w.waitRevived(r, since, revivalLimit)
		rec.measured, rec.revival, rec.revived = true, d, ok
		if !ok {
			rec.note += " (not revived: " + why + ")"
		}
	}
	switch rec.kind {
	case fKillDriver, fStopDriver:
		o, live, _ := s.LiveOwner()
		if !live {
			rec.note = "no live driver to hit"
			return
		}
		rec.at = time.Now()
		if rec.kind == fKillDriver {
			rec.done = signalIdentified(o.PID, o.PIDStart, syscall.SIGKILL)
			rec.note = fmt.Sprintf("SIGKILL driver pid %d", o.PID)
		} else {
			pause := time.Duration(1000+rng.Intn(3000)) * time.Millisecond
			rec.done = signalIdentified(o.PID, o.PIDStart, syscall.SIGSTOP)
			time.Sleep(pause)
			cont := signalIdentified(o.PID, o.PIDStart, syscall.SIGCONT)
			rec.note = fmt.Sprintf("SIGSTOP driver pid %d for %s (SIGCONT delivered: %v, else it was replaced)", o.PID, pause, cont)
		}
		if rec.done {
			measure(rec.at)
		}
	case fKillHarness, fStopHarness:
		// Mid-turn when the seat has one running within a few seconds.
		midTurn := false
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if hb, err := s.HeartbeatFile().Read(); err == nil && hb.Phase == "in-turn" {
				midTurn = true
				break
			}
		}
		sess, err := s.SessionFile().Read()
		if err != nil {
			rec.note = "no session: " + err.Error()
			return
		}
		// The pane pid is pantty's pane process; the harness is its child
		// (SIGKILL to either ends both, SIGSTOP must reach the harness itself).
		hpid, err := proc.HarnessPID(sess.PanePID)
		if err != nil {
			rec.note = "harness not running"
			return
		}
		start, err := procid.Start(hpid)
		if err != nil {
			rec.note = "harness not running"
			return
		}
		rec.at = time.Now()
		when := "between turns"
		if midTurn {
			when = "mid-turn"
		}
		if rec.kind == fKillHarness {
			rec.done = signalIdentified(hpid, start, syscall.SIGKILL)
			rec.note = fmt.Sprintf("SIGKILL harness pid %d %s", hpid, when)
		} else {
			pause := time.Duration(1000+rng.Intn(3000)) * time.Millisecond
			rec.done = signalIdentified(hpid, start, syscall.SIGSTOP)
			time.Sleep(pause)
			signalIdentified(hpid, start, syscall.SIGCONT)
			rec.note = fmt.Sprintf("SIGSTOP harness pid %d %s for %s", hpid, when, pause)
		}
		if rec.done {
			measure(rec.at)
		}
	case fKillHook:
		// A hook lives a few milliseconds: watch /proc for new processes and
		// kill the first `pantty hook` of this seat, after a random 0–3 ms so
		// the kill lands at different steps of its write.
		p, ok := w.catchHook(r.name, 5*time.Second)
		if !ok {
			rec.note = "no hook process caught running within 5s"
			return
		}
		time.Sleep(time.Duration(rng.Intn(3000)) * time.Microsecond)
		rec.at = time.Now()
		if !signalIdentified(p.pid, p.start, syscall.SIGKILL) {
			rec.note = "the hook " + strings.Join(p.argv[1:], " ") + " finished before the kill"
			return
		}
		rec.done = true
		rec.note = "SIGKILL " + strings.Join(p.argv[1:], " ")
		measure(rec.at)
	case fKillTmux:
		pid := r.serverPID()
		start, err := procid.Start(pid)
		if pid == 0 || err != nil {
			rec.note = "no tmux server running"
			return
		}
		rec.at = time.Now()
		rec.done = signalIdentified(pid, start, syscall.SIGKILL)
		rec.note = fmt.Sprintf("SIGKILL tmux server pid %d", pid)
		measure(rec.at)
	case fKillControl:
		w.killControl(rec, r)
	case fStateFull:
		rec.at = time.Now()
		rec.note, rec.done = w.fillStateRoot(rng)
		if rec.done {
			measure(rec.at)
		}
	case fProvider429:
		id := fmt.Sprintf("lim-%04d", n)
		until := time.Now().Add(3 * time.Second).Unix()
		w.send(l, sentMsg{id: id, seat: r.name, kind: "provider-429", sender: "injector"},
			fmt.Sprintf("[sim:429 reset=in 1s][sim:until=%d] work the provider refuses for a while (%s)", until, id))
		rec.done = true
		rec.note = "sent " + id + " (refused until " + time.Unix(until, 0).Format("15:04:05") + ")"
		time.Sleep(2 * time.Second)
	case fOutageAuth:
		id := fmt.Sprintf("key-%04d", n)
		until := time.Now().Add(3 * time.Second).Unix()
		w.send(l, sentMsg{id: id, seat: r.name, kind: fOutageAuth, sender: "injector"},
			fmt.Sprintf("[sim:auth][sim:until=%d] work the harness cannot authenticate for a while (%s)", until, id))
		rec.done = true
		rec.note = "sent " + id + " (401 until " + time.Unix(until, 0).Format("15:04:05") + "; the seat re-probes after its backoff)"
	case fCompact:
		res := w.pantty(faultDeadline, "", "seat", "compact", r.name)
		rec.done = true
		rec.note = "seat compact: " + res.String()
		if res.code != 0 && res.code != 1 {
			rec.violation = "compact exit " + fmt.Sprint(res.code)
		}
	case fStopStart:
		res := w.pantty(faultDeadline, "", "seat", "stop", r.name)
		if res.code != 0 {
			rec.violation = "seat stop: " + res.String()
		}
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		rec.at = time.Now()
		res2 := w.pantty(faultDeadline, "", "seat", "start", r.name)
		rec.done = true
		rec.note = fmt.Sprintf("seat stop (%d), seat start (%d)", res.code, res2.code)
		if res2.code != 0 {
			rec.violation = "seat start after stop: " + res2.String()
		}
		measure(rec.at)
	case fSecondStart:
		if ok, why := w.revived(r, time.Now().Add(-3*time.Second)); !ok {
			rec.note = "not running right now (" + why + ")"
			return
		}
		o, _, _ := s.LiveOwner()
		res := w.pantty(faultDeadline, "", "seat", "start", r.name)
		rec.done = true
		rec.note = "second start: " + res.String()
		if res.code != 0 || !strings.Contains(res.stdout, "already running") || !strings.Contains(res.stdout, o.Holder) {
			// The holder may have died in between (another seat's fault cannot
			// touch it, but recover can replace a wedged one): check.
			if o2, live, _ := s.LiveOwner(); !live || o2.Holder != o.Holder {
				rec.note += " (the holder changed meanwhile)"
			} else {
				rec.violation = "a second start on a running seat was not answered 'already running' (exit 0) naming " + o.Holder
			}
		}
	case fDoubleStart:
		if res := w.pantty(faultDeadline, "", "seat", "stop", r.name); res.code != 0 {
			rec.violation = "seat stop: " + res.String()
			return
		}
		rec.at = time.Now()
		var wg sync.WaitGroup
		res := make([]result, 2)
		gate := make(chan struct{})
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				res[i] = w.pantty(faultDeadline, "", "seat", "start", r.name)
			}()
		}
		close(gate)
		wg.Wait()
		rec.done = true
		codes := []int{res[0].code, res[1].code}
		sort.Ints(codes)
		rec.note = fmt.Sprintf("two concurrent starts: exit %d and %d", codes[0], codes[1])
		// One started the driver; the other found it and said so, naming it.
		started, running := -1, -1
		for i, x := range res {
			switch {
			case strings.Contains(x.stdout, " started: holder "):
				started = i
			case strings.Contains(x.stdout, "already running: holder "):
				running = i
			}
		}
		o, _, _ := s.LiveOwner()
		if codes[0] != 0 || codes[1] != 0 || started < 0 || running < 0 || !strings.Contains(res[running].stdout, o.Holder) {
			rec.violation = fmt.Sprintf("two starts of a stopped seat gave %v, want both 0: one started, one 'already running' naming it (%s; %s)", codes, res[0], res[1])
		}
		measure(rec.at)
	}
}

// recoverRun is one `pantty recover` run, as its JSON report says.
type recoverRun struct {
	at    time.Time
	code  int
	busy  bool
	acts  []recoverAct
	took  time.Duration
	error string
}

type recoverAct struct {
	seat, verdict, cause, action, result string
}

// recoverLog collects the runs of the cron-like recover.
type recoverLog struct {
	mu   sync.Mutex
	runs []recoverRun
}

// recoverOnce runs `pantty recover --json` and parses what it did.
func (w *world) recoverOnce() recoverRun {
	run := recoverRun{at: time.Now()}
	res := w.pantty(2*time.Minute, "", "recover", "--json", "--interval", "3s")
	run.code, run.took = res.code, res.took
	var rep struct {
		Busy  string `json:"busy"`
		Seats []struct {
			Seat    string `json:"seat"`
			Verdict string `json:"verdict"`
			Cause   string `json:"cause"`
			Action  string `json:"action"`
			Result  string `json:"result"`
		} `json:"seats"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		run.error = fmt.Sprintf("exit %d, no report: %v%s", res.code, err, oneLine(res.stderr))
		return run
	}
	run.busy = rep.Busy != ""
	for _, s := range rep.Seats {
		run.acts = append(run.acts, recoverAct{seat: s.Seat, verdict: s.Verdict, cause: s.Cause, action: s.Action, result: s.Result})
	}
	return run
}

// cron runs recover every 2–4 s (seeded jitter) until stop, in the background,
// whatever else is happening: at any moment, like a real scheduler.
func (w *world) cron(rng *rand.Rand, stop <-chan struct{}, rl *recoverLog) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(2000+rng.Intn(2000)) * time.Millisecond):
		}
		run := w.recoverOnce()
		rl.mu.Lock()
		rl.runs = append(rl.runs, run)
		rl.mu.Unlock()
		for _, a := range run.acts {
			if a.verdict != "" && a.verdict != "ok" {
				w.log.printf("recover: %s %s (%s) → %s = %s", a.seat, a.verdict, a.cause, a.action, a.result)
			}
		}
		if run.error != "" {
			w.log.printf("recover: %s", run.error)
		}
	}
}
