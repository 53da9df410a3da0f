package recover

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// Options steer one sweep.
type Options struct {
	Home     string        // the state root ($PANTTY_HOME)
	Pantty   string        // absolute path of the pantty binary drivers run as
	DryRun   bool          // observe and classify, print what would be done, change nothing
	Interval time.Duration // how often the scheduler runs recover (lock staleness); default 1m
	Now      func() time.Time
}

// DefaultInterval is how often an installed entry runs recover.
const DefaultInterval = time.Minute

// Report is what one sweep saw and did.
type Report struct {
	Home      string          `json:"home"`
	At        time.Time       `json:"at"`
	TookMS    int64           `json:"took_ms"`
	DryRun    bool            `json:"dry_run"`
	Busy      string          `json:"busy,omitempty"` // another run holds the lock: this one did nothing
	TmuxCalls int             `json:"tmux_calls"`
	Seats     []SeatReport    `json:"seats"`
	Providers []ProviderWait  `json:"providers"`
	Cleanups  []CleanupReport `json:"cleanups"`
	Notes     []string        `json:"notes,omitempty"` // about the sweep itself (its log's rotation, ...)
	Code      int             `json:"exit_code"`
}

// SeatReport is one seat's verdict and what was done about it.
type SeatReport struct {
	Seat        string        `json:"seat"`
	Intent      string        `json:"intent"`
	Verdict     string        `json:"verdict"` // ok, dead, unknown; "" for a seat left alone
	Cause       string        `json:"cause,omitempty"`
	Class       machine.Class `json:"class,omitempty"`
	Reason      string        `json:"reason"`
	Action      string        `json:"action,omitempty"`
	Result      string        `json:"result,omitempty"` // verified, not verified: why, dry run, ...
	Phase       string        `json:"phase,omitempty"`
	Session     string        `json:"session,omitempty"`
	Rung        string        `json:"rung,omitempty"`  // the rung the harness was launched on
	Floor       string        `json:"floor,omitempty"` // the demotion floor
	Waiting     string        `json:"waiting,omitempty"`
	Failures    int           `json:"failures,omitempty"`
	NextAttempt *time.Time    `json:"next_attempt,omitempty"`
	// Launch lists what would stop the harness from launching the way `seat
	// start` recorded, judged in this process's environment (the scheduler's).
	Launch []string `json:"launch_problems,omitempty"`
	// revived: the action's revival was verified (Result then starts
	// "verified"). The exit code and recover-last.toml's count read this,
	// not Result's words; the JSON has the words only, as it always had.
	revived bool
}

// ProviderWait is one active provider block, and the seats it holds.
type ProviderWait struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
	Left     string    `json:"left"`
	Error    string    `json:"error"`
	Parsed   bool      `json:"parsed"` // false: the reset was not readable; re-probe at Until
	By       string    `json:"refused_on"`
	Seats    []string  `json:"seats"`
}

type sweeper struct {
	opts Options
	// now is the instant the sweep observes at (opts.Now() at its start);
	// a decision made later in the sweep, after an action took real time,
	// reads opts.Now() again: the same injected clock, never the wall's.
	now       time.Time
	snaps     map[string]paneSnap
	tmuxCalls int
}

// Sweep runs one recovery sweep over every seat of opts.Home: cleanup markers
// first, then every seat whose intent is running — observe, classify, act on
// dead ones only, verify. It returns the report and the exit code (0 done, 1 a
// seat is still dead, 4 a seat or the lock could not be observed).
func Sweep(opts Options) (Report, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	began := time.Now() // the sweep's real duration, whatever clock is injected
	sw := &sweeper{opts: opts, now: opts.Now(), snaps: map[string]paneSnap{}}
	rep := Report{Home: opts.Home, At: sw.now.UTC(), DryRun: opts.DryRun, Seats: []SeatReport{}, Providers: []ProviderWait{}, Cleanups: []CleanupReport{}}
	if fi, err := os.Stat(opts.Home); err != nil || !fi.IsDir() {
		return rep, fmt.Errorf("no state root at %s (is PANTTY_HOME right?): %v", opts.Home, err)
	}
	var lock *sweepLock
	if !opts.DryRun {
		var err error
		lock, err = lockSweep(opts.Home, opts.Interval, sw.now)
		var busy errBusy
		if errors.As(err, &busy) {
			rep.Busy = busy.holder
			return rep, nil
		}
		if err != nil {
			rep.Code = 4
			return rep, err
		}
		defer lock.release()
		if note := capLog(opts.Home); note != "" {
			rep.Notes = append(rep.Notes, note)
		}
	}
	names, err := state.List(opts.Home)
	if err != nil {
		return rep, err
	}
	blocks, berr := outage.ReadBlocks(opts.Home)
	// Cleanup markers first: a finished seat is torn down, not revived.
	for _, n := range names {
		s, _ := state.Open(opts.Home, n)
		if r := sw.finalize(s); r != nil {
			rep.Cleanups = append(rep.Cleanups, *r)
		}
	}
	// Each seat's files are read on their own (no lock, nothing shared), so the
	// seats are read concurrently.
	obs := make([]*observation, len(names))
	inParallel(len(names), func(i int) {
		s, _ := state.Open(opts.Home, names[i])
		o := readFiles(s, sw.now, blocks)
		if berr != nil {
			o.unreadable = append(o.unreadable, "providers.toml: "+berr.Error())
		}
		obs[i] = o
	})
	// One tmux call per socket, for all the seats on it.
	for _, o := range obs {
		if o.needsTmux() {
			o.attach(sw.snapshot(o.socket))
		}
	}
	// A seat that is not dead is only recorded (health.toml: two fsyncs), and
	// those writes overlap when such seats are handled concurrently. A dead seat
	// is acted on one at a time, in order, as before.
	// Each seat is classified once, and its verdict is what it is handled
	// by: a second reading could disagree with the first (a status written
	// in between) and act on a seat in parallel that was judged not dead.
	rep.Seats = make([]SeatReport, len(obs))
	verdicts := make([]verdict, len(obs))
	handled := make([]bool, len(obs))
	inParallel(len(obs), func(i int) {
		if verdicts[i] = classify(obs[i]); verdicts[i].State != Dead {
			rep.Seats[i], handled[i] = sw.handle(obs[i], verdicts[i]), true
		}
	})
	for i, o := range obs {
		if !handled[i] {
			rep.Seats[i] = sw.handle(o, verdicts[i])
		}
	}
	for _, p := range blocks.SortedProviders() {
		b, active := blocks.Active(p, sw.now)
		if !active {
			continue
		}
		w := ProviderWait{Provider: p, Until: b.Until, Left: shortDur(b.Until.Sub(sw.now)), Error: b.Error, Parsed: b.Parsed, By: b.Seat}
		for _, o := range obs {
			if o.cfg.Name != "" && o.hasIntent && o.intent.Want == state.IntentRunning {
				for _, r := range o.cfg.Rungs() {
					if r.Provider == p {
						w.Seats = append(w.Seats, o.s.Name)
						break
					}
				}
			}
		}
		rep.Providers = append(rep.Providers, w)
	}
	rep.TmuxCalls = sw.tmuxCalls
	rep.TookMS = time.Since(began).Milliseconds()
	rep.Code = exitCode(rep)
	if !opts.DryRun {
		last := state.LastSweep{At: sw.now.UTC(), Took: config.Duration{Duration: time.Duration(rep.TookMS) * time.Millisecond},
			PID: os.Getpid(), Interval: config.Duration{Duration: opts.Interval}, Code: rep.Code}
		for _, r := range rep.Seats {
			switch r.Verdict {
			case OK:
				last.OK++
			case Dead:
				last.Dead++
			case Unknown:
				last.Unknown++
			}
			if r.Verdict != "" {
				last.Seats++
			}
			if r.revived {
				last.Revived++
			}
		}
		if err := state.LastSweepFile(opts.Home).Write(last); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// exitCode: 4 when anything could not be observed, else 1 when a seat is still
// dead after the sweep, else 0.
func exitCode(r Report) int {
	code := 0
	for _, s := range r.Seats {
		switch {
		case s.Verdict == Unknown:
			return 4
		case s.Verdict == Dead && !s.revived:
			code = 1
		}
	}
	for _, c := range r.Cleanups {
		if c.State == Unknown {
			return 4
		}
	}
	return code
}

// handle acts on one seat's verdict when it is dead, and records the verdict.
func (sw *sweeper) handle(o *observation, v verdict) SeatReport {
	r := SeatReport{Seat: o.s.Name}
	if !o.hasIntent && len(o.unreadable) == 0 {
		r.Intent, r.Reason = "none", "never started (no intent.toml): left alone"
		return r
	}
	r.Intent = o.intent.Want
	if len(o.unreadable) == 0 && o.intent.Want != state.IntentRunning {
		r.Reason = "intent " + o.intent.Want + ": left alone"
		return r
	}
	r.Verdict, r.Cause, r.Class, r.Reason = v.State, v.Cause, v.Class, v.Reason
	if o.cfg.Name != "" {
		r.Launch = launch.LaunchProblems(o.s, o.cfg)
	}
	r.Phase, r.Session, r.Rung, r.Floor = o.hb.Phase, o.sess.ID, o.launched, o.rec.Floor
	if !o.plan.Wait.IsZero() {
		r.Waiting = o.plan.Waiting
	}
	rec := o.rec
	recChanged := false
	switch {
	case v.State == Unknown:
		r.Action = "none: unknown is never acted on"
	case v.State == OK:
		if rec.Failures > 0 || !rec.NextAttempt.IsZero() || rec.MeansFailures > 0 {
			// The seat came back (by itself or through an earlier action): revival
			// observed, the counters and the backoff are cleared.
			rec.Failures, rec.MeansFailures, rec.NextAttempt = 0, 0, time.Time{}
			rec.LastResult = "revived (observed ok " + sw.now.UTC().Format(time.RFC3339) + ")"
			recChanged = true
			r.Action = "cleared the failure counter and backoff: observed revived"
		}
		if a, changed := sw.climb(o, &rec); a != "" {
			r.Action = strings.TrimPrefix(r.Action+"; "+a, "; ")
			recChanged = recChanged || changed
		}
	case !v.ActAfter.IsZero():
		r.Action = "none yet: recover acts if it is still so at " + v.ActAfter.UTC().Format(time.RFC3339)
	case sw.now.Before(rec.NextAttempt) && !(rec.LastCause == CauseNoModel && v.Cause != CauseNoModel):
		// A backoff earned while the live driver re-probed its model access
		// (no-model-access: recover restarted nothing) does not hold back the
		// revival of another cause: a driver killed during a credential
		// outage would wait it out (up to backoff_max), and without a
		// driver nothing re-probes.
		r.Action = fmt.Sprintf("none: backoff after %d unverified recoveries, next attempt at %s", rec.Failures, rec.NextAttempt.UTC().Format(time.RFC3339))
	case sw.opts.DryRun:
		r.Action, r.Result = plan(v), "dry run: nothing done"
	default:
		if why := moved(o); why != "" {
			r.Action, r.Result = "none: "+why, "left alone: judged again at the next sweep"
			break
		}
		r.Action, r.Result, r.revived = sw.act(o, v, &rec)
		recChanged = true
	}
	r.Failures, r.Floor = rec.Failures, rec.Floor
	if !rec.NextAttempt.IsZero() {
		t := rec.NextAttempt
		r.NextAttempt = &t
	}
	if sw.opts.DryRun {
		return r
	}
	if recChanged {
		if err := o.s.RecoveryFile().Write(rec); err != nil {
			r.Result += "; recording recovery.toml failed: " + err.Error()
		}
	}
	if v.State == Unknown && o.cannotWriteHealth() {
		return r
	}
	h := state.Health{At: sw.now.UTC(), Verdict: r.Verdict, Cause: r.Cause, Class: r.Class, Reason: r.Reason,
		Action: r.Action, Result: r.Result, Phase: o.hb.Phase, Session: o.sess.ID, Launches: o.sess.Launches,
		Rung: o.launched, Floor: rec.Floor, Waiting: r.Waiting}
	if v.State == Dead {
		h.Since = v.Since
		if h.Since.IsZero() {
			h.Since = sw.now.UTC()
		}
	}
	if err := state.HealthFile(o.s).Write(h); err != nil {
		r.Result = strings.TrimPrefix(r.Result+"; recording health.toml failed: "+err.Error(), "; ")
	}
	return r
}

// cannotWriteHealth: health.toml itself is what could not be read (a directory
// in its place); writing would fail the same way.
func (o *observation) cannotWriteHealth() bool {
	for _, u := range o.unreadable {
		if strings.HasPrefix(u, "health.toml") {
			return true
		}
	}
	return false
}

// act recovers a dead seat and keeps the books: a verified revival clears the
// failure counter and the backoff; an unverified one counts as a means failure,
// backs off exponentially (capped) and, after demote_after of them on one
// floor, lowers the floor one rung and tries again at once on the new floor.
func (sw *sweeper) act(o *observation, v verdict, rec *state.Recovery) (action, result string, revived bool) {
	did, verified, why := sw.recoverSeat(o, v)
	if !verified {
		if m := moved(o); m != "" {
			// The person stopped or started the seat while recover acted
			// (its release refused by a driver that took the seat since, or
			// its driver left on a stop): not a failed recovery, so no
			// backoff and no step down the ladder.
			return strings.Join(append(did, "left alone: "+m), "; "), "not counted: " + m, false
		}
	}
	rec.LastCause, rec.LastAt = v.Cause, sw.now.UTC()
	if verified {
		sw.revivedBooks(rec, did)
		return strings.Join(did, "; "), "verified: fresh heartbeat from the new driver, harness up on session " + o.sess.ID, true
	}
	rec.Failures++
	rec.MeansFailures++
	rc := o.cfg.Recovery
	backoff := rc.Backoff.Duration << min(rec.Failures-1, 20)
	if backoff > rc.BackoffMax.Duration || backoff <= 0 {
		backoff = rc.BackoffMax.Duration
	}
	rec.NextAttempt = sw.now.Add(backoff).UTC()
	rec.LastAction, rec.LastResult = strings.Join(did, "; "), "not verified: "+why
	result = "not verified: " + why
	rungs := o.cfg.Rungs()
	fi, _ := o.cfg.RungIndex(rec.Floor)
	if rec.MeansFailures < rc.DemoteAfter || fi+1 >= len(rungs) {
		if fi+1 >= len(rungs) && rec.MeansFailures >= rc.DemoteAfter && len(rungs) > 1 {
			result += "; already on the lowest rung"
		}
		return strings.Join(did, "; "), result + fmt.Sprintf("; failure %d, next attempt at %s", rec.Failures, rec.NextAttempt.Format(time.RFC3339)), false
	}
	// Demote: the floor moves down one rung, persisted; the running rung is
	// derived from it by every driver from now on.
	rec.Floor = rungs[fi+1].Name
	rec.FloorSince = sw.now.UTC()
	rec.FloorWhy = fmt.Sprintf("%d unverified recoveries on rung %s (%s): %s", rec.MeansFailures, orNone(rungs[fi].Name), v.Cause, why)
	rec.MeansFailures = 0
	did = append(did, fmt.Sprintf("lowered the demotion floor to rung %s", rec.Floor))
	// Persist the floor before acting on it: a new driver starts on the rung it
	// derives from recovery.toml, and a live one follows it at its next boundary.
	if err := o.s.RecoveryFile().Write(*rec); err != nil {
		return strings.Join(did, "; "), "not verified: recording the new floor failed: " + err.Error(), false
	}
	// The seat is read again: the first attempt changed the driver. A live,
	// beating driver follows the new floor by itself at its next boundary: it is
	// only waited for. Without one, a driver is started on the new floor.
	o2 := readFiles(o.s, sw.opts.Now(), nil)
	o2.rec = *rec
	if len(o2.unreadable) > 0 {
		why = strings.Join(o2.unreadable, "; ")
	} else if o2.ownerLive && o2.ours() && !o2.hbStale() {
		if okv, why2 := sw.verify(o2, sw.opts.Now(), nil); okv {
			sw.revivedBooks(rec, did)
			return strings.Join(did, "; "), "verified on rung " + rec.Floor + " (the live driver followed the floor)", true
		} else {
			why = why2
		}
	} else {
		did2, verified2, why2 := sw.recoverSeat(o2, dead(CauseDriverGone, "no live driver after the demotion"))
		did = append(did, did2...)
		if verified2 {
			sw.revivedBooks(rec, did)
			return strings.Join(did, "; "), "verified on rung " + rec.Floor, true
		}
		why = why2
	}
	rec.LastAction, rec.LastResult = strings.Join(did, "; "), "not verified: "+why
	return strings.Join(did, "; "), "not verified on rung " + rec.Floor + ": " + why, false
}

func (sw *sweeper) revivedBooks(rec *state.Recovery, did []string) {
	rec.Failures, rec.MeansFailures, rec.NextAttempt = 0, 0, time.Time{}
	rec.Revived++
	rec.LastAction, rec.LastResult = strings.Join(did, "; "), "verified"
}

// climb raises the demotion floor one rung after climb_after good turns below
// the top: a demotion is reversible, never permanent and unannounced.
func (sw *sweeper) climb(o *observation, rec *state.Recovery) (string, bool) {
	fi, known := o.cfg.RungIndex(rec.Floor)
	if rec.Floor == "" || (known && fi == 0) {
		return "", false
	}
	rungs := o.cfg.Rungs()
	if !known {
		if sw.opts.DryRun {
			return fmt.Sprintf("would reset the floor: rung %q is no longer on the ladder", rec.Floor), false
		}
		rec.Floor, rec.FloorSince, rec.FloorWhy = "", sw.now.UTC(), "the rung of the floor is no longer in seat.toml"
		return "reset the demotion floor to the top: its rung is no longer on the ladder", true
	}
	good := o.goodTurns(rec.FloorSince)
	if good < o.cfg.Recovery.ClimbAfter {
		return "", false
	}
	to := rungs[fi-1].Name
	if fi-1 == 0 {
		to = ""
	}
	what := fmt.Sprintf("raised the demotion floor from rung %s to %s after %d good turns", rec.Floor, orNone(rungs[fi-1].Name), good)
	if sw.opts.DryRun {
		return "would have " + what, false
	}
	rec.Floor, rec.FloorSince, rec.FloorWhy = to, sw.now.UTC(), what
	rec.MeansFailures = 0
	return what, true
}

// sweepWorkers bounds the goroutines of a sweep's per-seat work: enough to
// overlap file reads and fsyncs, few enough to be cheap on a small machine.
const sweepWorkers = 8

// inParallel runs f(0), …, f(n-1) on up to sweepWorkers goroutines and
// returns when all have returned.
func inParallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n, sweepWorkers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// moved says why a seat judged dead must be left alone after all, or "": the
// person stopped it, or a driver other than the one judged holds it now,
// since recover read its files (a 'seat stop' and 'seat start' while the
// sweep looked: its driver would have been asked to release the seat, seen
// in a soak, 2026-12-06). The driver this sweep started itself is not a
// move: its unverified revival counts (backoff, the ladder). The next sweep
// judges the seat as it is then.
func moved(o *observation) string {
	if in, err := o.s.IntentFile().Read(); err == nil && in.Want != state.IntentRunning {
		return fmt.Sprintf("the seat's intent changed to %q while recover looked (%s)", in.Want, in.By)
	}
	cur, live, err := o.s.LiveOwner()
	ours := o.spawned != 0 && cur.PID == o.spawned
	if err == nil && live && !ours && (!o.ownerLive || cur.Holder != o.owner.Holder) {
		return "the seat changed hands while recover looked: now " + cur.String()
	}
	return ""
}
