package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// readyPoll is how often the driver looks at the pane of a lazily starting
// harness until its input box shows: no hook fires at start, so the pane is the
// only witness. Bounded by ready_timeout like any start.
const readyPoll = 100 * time.Millisecond

// lazyStart returns the pane test for a harness that starts lazily
// (Capabilities.StartsLazily with its InputReady), and whether it does.
func (d *Driver) lazyStart() (func(screen string) bool, bool) {
	c := d.Ad.Caps()
	return c.InputReady, c.StartsLazily && c.InputReady != nil
}

// armReadyPoll replaces the ready timeout of a fresh launch with the pane poll
// for a lazily starting harness (pollReady keeps the ready timeout itself).
func (d *Driver) armReadyPoll() {
	if _, ok := d.lazyStart(); ok {
		d.readyT.set(readyPoll)
	}
}

// pollReady runs on the ready timer of a lazily starting harness: ready once the
// pane shows the input box, polled again until ready_timeout has passed since
// the launch. It reports whether it handled the tick (false: the ordinary
// ready timeout applies).
func (d *Driver) pollReady() bool {
	ls, ok := d.lazyStart()
	if !ok || d.ready || d.now().Sub(d.launchAt) >= d.Cfg.ReadyTimeout.Duration {
		return false
	}
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	if err == nil && ls(screen) {
		d.becomeReady("the pane shows the input box (this harness fires SessionStart only with a turn)")
		return true
	}
	d.readyT.set(readyPoll)
	return true
}

// becomeReady marks the harness ready in this launch and gives the spawning
// start its verdict. An adapter that knows its ready screen (InputReady) is
// ready only once the pane shows it: a paste sent earlier is not bracketed
// and may lose its Enter. The driver does not wait for that in its loop: a
// pane watch looks (after the harness's redraw, RedrawAfterStart), and the
// seat turns ready when it answers, or after inputReadyLimit (the submission
// evidence still decides whether a paste arrived).
func (d *Driver) becomeReady(why string) {
	if d.ready || d.readying {
		return
	}
	caps := d.Ad.Caps()
	if caps.InputReady == nil {
		d.markReady(why, false)
		return
	}
	d.readying = true
	d.watchPane(flight.Wait{Quiet: caps.RedrawAfterStart, Every: 50 * time.Millisecond, Limit: inputReadyLimit, Cond: caps.InputReady},
		func(ok bool) {
			d.readying = false
			if !ok {
				d.logf("the pane did not show the harness's input box within %s of SessionStart", inputReadyLimit)
			}
			d.markReady(why, !ok)
		})
}

// dialogBeforeStart runs when the harness has not come up within
// ready_timeout: if the pane shows a dialog instead (Claude Code 2.1.328 asks
// whether to trust the folder before it fires SessionStart), the harness is
// kept, the queue holds, and the start that waits hears the dialog and the
// fix instead of a failure that kills the harness. It reports whether it did.
// The harness comes up once a person answers (its SessionStart, becomeReady).
func (d *Driver) dialogBeforeStart() bool {
	if d.Cfg.Shape == config.ShapeTurn {
		return false
	}
	// A harness that exited leaves its last screen on the dead pane
	// (remain-on-exit): an error message is no dialog, and that start fails.
	if _, err := procid.Start(d.sess.PanePID); err != nil {
		return false
	}
	if !d.boxHolds() || !d.heldByDialog() {
		return false
	}
	d.logf("the harness did not come up within %s: the pane shows a dialog; it stays up for a person to answer", d.Cfg.ReadyTimeout.Duration)
	d.heldAtStart()
	return true
}

// heldAtStart is the start's verdict when the harness came up but its first
// screen is a dialog, not the input box: the driver runs and holds the queue
// (pantty answers no dialog), and start says so with the fix instead of
// "started". It reports whether it gave that verdict.
func (d *Driver) heldAtStart() bool {
	if d.Report == nil || !d.boxHolds() || !d.heldByDialog() {
		return false
	}
	d.logf("harness up, but the pane shows a dialog instead of its input box: the queue holds until a person answers it")
	d.report(seat.Progress{State: seat.StateHeld, Holder: d.Lock.Owner.Holder, Session: d.sess.ID, Adopted: d.adopted,
		Text: fmt.Sprintf("the harness shows a dialog instead of its input box: %s; pantty answers no dialog and submits nothing until it is gone: answer it with 'pantty seat attach %s' (detach with C-b d), and the queue goes on",
			strings.TrimPrefix(d.held, dialogHold), d.S.Name)})
	d.Report = nil
	return true
}

// markReady is the harness ready: the ready timer stops, the phase moves and
// the start that waits hears it — that it started, or, when look says the
// input box was not seen, that a dialog holds it (heldAtStart).
func (d *Driver) markReady(why string, look bool) {
	d.ready = true
	d.readyT.stop()
	d.logf("harness ready (%s)", why)
	d.to(machine.Ready, "")
	if look && d.heldAtStart() {
		return
	}
	d.report(seat.Progress{State: "ready", Holder: d.Lock.Owner.Holder, Session: d.sess.ID, Adopted: d.adopted})
	d.Report = nil
}

// injectsLater reports whether a compaction's re-injection arrives with the
// next turn rather than right after the compaction (Capabilities.StartsLazily).
func (d *Driver) injectsLater() bool {
	_, ok := d.lazyStart()
	return ok || d.Ad.Caps().InjectsWithNextTurn
}

// recordLateInjection takes a SessionStart (source compact) that arrived after
// the cycle it belongs to was done (Capabilities.StartsLazily): the handoff it injected into the
// first request after the compaction is recorded in that cycle's record, and
// checked against the one materialized. It reports whether a cycle was waiting.
func (d *Driver) recordLateInjection(ev hookwire.Event) bool {
	r, err := d.S.CycleFile().Read()
	if err != nil || r.State != "done" || r.Injected != "" || r.PostCompact == "" {
		return false
	}
	r.Injected, r.InjectedHash = ev.File, ev.Pantty["injected_hash"]
	if r.InjectedHash != r.Hash {
		r.Error = fmt.Sprintf("the handoff injected with the next turn (hash %q) is not the one materialized (%s)", r.InjectedHash, r.Hash)
		d.logf("compaction cycle %s: %s", r.ID, r.Error)
	} else {
		d.logf("compaction cycle %s: handoff %s re-injected with the first turn after it (%s)", r.ID, r.Hash, ev.File)
	}
	d.S.CycleFile().Write(r)
	d.S.CompactRecordFile(r.ID).Write(r)
	return true
}

// maxLateReadings bounds the readings kept while a self-named session id is
// not recorded yet (a first turn makes one per model request).
const maxLateReadings = 64

// applyLateReadings takes in the readings kept before the session id was
// recorded, in arrival order: those of the recorded session count (the first
// is the floor of the fresh session), others are dropped.
func (d *Driver) applyLateReadings() {
	late := d.lateReadings
	d.lateReadings = nil
	for _, ev := range late {
		d.onContextReading(ev)
	}
}

// onContextReading turns a ContextReading event into context.toml by the same
// rule as the status line (applyReading). The reading describes the request
// that ended the turn, so it is taken in as of now, not of the hook's write:
// it is never older than the turn end it belongs to.
func (d *Driver) onContextReading(ev hookwire.Event) {
	var p state.ContextReadingPayload
	if err := json.Unmarshal(ev.Payload, &p); err != nil || p.SessionID == "" || p.Occupancy <= 0 {
		return
	}
	if d.sess.ID == "" && d.selfNaming() {
		// The harness names its session with the first bound turn end, which
		// comes after this turn's readings: keep them until then.
		if len(d.lateReadings) < maxLateReadings {
			d.lateReadings = append(d.lateReadings, ev)
		}
		return
	}
	if p.SessionID != d.sess.ID || d.as != nil && d.as.readings {
		return
	}
	src := p.Source
	if src == "" {
		src = "adapter context reading"
	}
	d.applyReading(state.StatusReading{SessionID: p.SessionID, Input: p.Added, Occupancy: p.Occupancy, Window: p.Window, Model: p.Model},
		src, d.now().UTC())
}

// Run is the body of the hidden `pantty __drive` command: take the lock or
// report who holds it, then run the loop. fd 3, when present, is the pipe to the
// spawning start.
func Run(home, name, pantty string) int {
	var pipe *os.File
	if f := os.NewFile(3, "progress"); f != nil {
		if _, err := f.Stat(); err == nil {
			pipe = f
		}
	}
	enc := func(p seat.Progress) {
		if pipe == nil {
			return
		}
		b, _ := json.Marshal(p)
		pipe.Write(append(b, '\n'))
		if p.State != "progress" {
			pipe.Close()
			pipe = nil
		}
	}
	logger := log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)
	fail := func(code int, err error) int {
		logger.Printf("driver: %v", err)
		state := "error"
		if code == 3 {
			state = "refused"
		}
		enc(seat.Progress{State: state, Text: err.Error()})
		return code
	}
	s, err := state.Existing(home, name)
	if err != nil {
		return fail(2, err)
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return fail(2, err)
	}
	// Launch the way the person's `seat start` recorded, whoever started this
	// driver (cron's PATH=/usr/bin:/bin and no key must not reach the harness).
	switch rec, err := s.LaunchEnvFile().Read(); {
	case err == nil:
		launch.AdoptLaunchEnv(rec, cfg)
		logger.Printf("driver: harness environment from launch-env.toml (recorded %s by %s)", rec.RecordedAt.Format(time.RFC3339), rec.By)
	case errors.Is(err, fs.ErrNotExist):
		logger.Printf("driver: no launch-env.toml (never recorded by 'pantty seat start'): the harness gets this process's environment")
	default:
		return fail(1, err)
	}
	// Start on the running rung (demotion floor, provider blocks); the loop keeps
	// following it at every turn boundary.
	if cfg, err = outage.RunningConfig(s, cfg, time.Now()); err != nil {
		logger.Printf("driver: ladder: %v (starting on the top rung)", err)
	}
	// transport = "auto" is resolved once per driver start, for the
	// installed version (gates.ChooseTransport); session.toml records it.
	transport, why := gates.ChooseTransport(s.Home, cfg, time.Now())
	if why != "" {
		logger.Printf("driver: transport = %q: %s", cfg.Transport, why)
	}
	cfg.Transport = transport
	ad, err := harness.AdapterFor(cfg.Harness)
	if err != nil {
		return fail(2, err)
	}
	lock, err := seat.Acquire(s)
	if errors.Is(err, state.ErrOwned) {
		return fail(3, err)
	}
	if err != nil {
		return fail(1, err)
	}
	defer lock.Release()
	logger.SetPrefix(fmt.Sprintf("[%s %s] ", name, lock.Owner.Holder))
	logger.Printf("driver pid %d holds %s", os.Getpid(), s.LockPath())
	if why := stoppedMeanwhile(s); why != "" {
		// A driver recover started a moment before a person's 'seat stop'
		// took the lock after the stop had looked for one: running the
		// seat now would undo the stop that returned 0 (a soak's stop-start
		// racing a revival, 2026-12-06).
		logger.Printf("driver: %s: it leaves the seat as stopped", why)
		if pipe != nil {
			enc(seat.Progress{State: "error", Text: why + "; nothing was started"})
		}
		return 0
	}
	d := &Driver{S: s, Cfg: cfg, Ad: ad, Lock: lock, Pantty: pantty, Log: logger, autoWhy: why}
	d.S.Box.Now = d.now // the statuses it writes carry its clock's times
	if pipe != nil {
		// Only a driver someone waits for reports (and gives up at ready_timeout);
		// one spawned by recover keeps trying, and recover judges it.
		d.Report = enc
	}
	code := d.Loop()
	logger.Printf("driver exits with %d", code)
	if pipe != nil {
		enc(seat.Progress{State: "error", Text: "driver exited before the seat was ready; see " + s.DriverLogPath()})
	}
	return code
}

// stoppedMeanwhile says why a driver that now holds the seat must not run
// it: intent.toml says stopped (a stop recorded after this driver was
// started). A seat with no intent recorded runs, as before.
func stoppedMeanwhile(s state.Seat) string {
	in, err := s.IntentFile().Read()
	if err != nil || in.Want == state.IntentRunning {
		return ""
	}
	return fmt.Sprintf("the seat's intent is %q (recorded by '%s' at %s) since this driver was started", in.Want, in.By, in.At.Format(time.RFC3339))
}
