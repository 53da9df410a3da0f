package driver

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// cycleRun is the compaction cycle in progress and the request to answer.
type cycleRun struct {
	rec state.Cycle
	req *state.Request
}

// startCycle runs the compaction cycle at a boundary pantty chose: materialize
// the handoff and verify it changed (refusing to compact when it did not: a
// compaction is not reversible), then send /compact through the command door.
// The hooks re-inject the handoff (SessionStart, source compact); PreCompact,
// the injected hash and PostCompact are the cycle's evidence.
func (d *Driver) startCycle(req *state.Request, reason, instructions string) {
	now := d.now()
	c := state.Cycle{ID: fmt.Sprintf("k%d", now.UnixNano()), State: "requested", Reason: reason, Requested: now.UTC(),
		Before: d.ctxr.Occupancy}
	d.cycle = &cycleRun{rec: c, req: req}
	n, err := d.S.BuildNote(reason, now)
	if err != nil {
		d.endCycle("failed", "materialize: "+err.Error())
		return
	}
	rec, err := d.S.Handoff().Materialize(n)
	if err != nil {
		d.endCycle("failed", "materialize: "+err.Error())
		return
	}
	d.cycle.rec.Hash, d.cycle.rec.Handoff = rec.Hash, rec.Path
	if !rec.Changed {
		d.endCycle("failed", "the handoff did not change since the last one: refusing to compact")
		return
	}
	if instructions == "" {
		instructions = d.Cfg.Compaction.Instructions
		if instructions != "" && slices.Contains(harness.CommandRules(d.Ad).Bare, "compact") {
			// The seat-wide setting cannot reach this harness; the cycle still
			// runs. (Instructions asked for by one request are refused instead.)
			d.logf("compaction cycle %s: seat.toml compaction.instructions not passed: the %s harness's /compact takes no arguments", c.ID, d.Ad.Name())
			instructions = ""
		}
	}
	cmd, err := harness.NewCommand(d.Ad, "compact", instructions)
	if err != nil {
		d.endCycle("failed", err.Error())
		return
	}
	d.writeCycle()
	d.to(machine.CompactBegun, c.ID)
	d.cycleT.set(d.Cfg.Compaction.Timeout.Duration)
	d.sendCommand(cmd, nil, func(err error) { d.endCycle("failed", "send /compact: "+err.Error()) })
}

func (d *Driver) writeCycle() {
	if err := d.S.CycleFile().Write(d.cycle.rec); err != nil {
		d.logf("cycle: %v", err)
	}
}

// onCycleEvent records the evidence of a cycle, or of a compaction pantty did
// not choose (the PreCompact hook materialized for it).
func (d *Driver) onCycleEvent(ev hookwire.Event) {
	d.onCommandEvidence(ev)
	if d.cycle == nil {
		if ev.Kind == hookwire.EvSessionStart && d.recordLateInjection(ev) {
			return
		}
		if ev.Kind == hookwire.EvPreCompact {
			if why := ev.Pantty["block"]; why != "" {
				d.logf("compaction not chosen by pantty (trigger %s): the hook answered block, the handoff could not be materialized: %s", ev.Fields.Trigger, why)
			} else {
				d.logf("compaction not chosen by pantty (trigger %s): handoff materialized by %s", ev.Fields.Trigger, ev.Pantty["materialized_by"])
			}
		}
		if ev.Kind == hookwire.EvPostCompact && d.ctxr.FloorSource == "" {
			d.floorPending = "first request after a compaction (includes the summary)"
		}
		return
	}
	r := &d.cycle.rec
	switch ev.Kind {
	case hookwire.EvPreCompact:
		r.PreCompact = ev.File
	case hookwire.EvSessionStart:
		r.Injected, r.InjectedHash = ev.File, ev.Pantty["injected_hash"]
	case hookwire.EvPostCompact:
		r.PostCompact = ev.File
	}
	d.writeCycle()
	switch v, why := machine.JudgeCycle(d.cycleEvidence()); v {
	case machine.CycleDone:
		d.endCycle("done", "")
	case machine.CycleFailed:
		d.endCycle("failed", why)
	}
}

// cycleEvidence is the cycle's record as machine.JudgeCycle weighs it.
func (d *Driver) cycleEvidence() machine.Cycle {
	r := d.cycle.rec
	return machine.Cycle{PreCompact: r.PreCompact != "", Injected: r.Injected != "", PostCompact: r.PostCompact != "",
		Hash: r.Hash, InjectedHash: r.InjectedHash, InjectsLater: d.injectsLater()}
}

// onCycleTimeout fails a cycle whose evidence did not all arrive.
func (d *Driver) onCycleTimeout() {
	if d.cycle == nil {
		return
	}
	d.endCycle("failed", fmt.Sprintf("no %s within %s (a blocked or failed compaction)", strings.Join(d.cycleEvidence().Missing(), ", "), d.Cfg.Compaction.Timeout.Duration))
}

// endCycle records the cycle's outcome (cycle.toml and a dated artifact), makes a
// failure visible, and answers the request that asked for it.
func (d *Driver) endCycle(state, errText string) {
	d.cycleT.stop()
	if d.cmdRun != nil && d.cmdRun.req == nil {
		d.cmdRun, d.cmdHeld = nil, "" // the cycle's own /compact
	}
	r := &d.cycle.rec
	r.State, r.Error, r.Ended = state, errText, d.now().UTC()
	d.writeCycle()
	if err := d.S.CompactRecordFile(r.ID).Write(*r); err != nil {
		d.logf("cycle artifact: %v", err)
	}
	d.logf("compaction cycle %s %s %s", r.ID, state, errText)
	d.lastCycleEnd = r.Ended
	d.sinceRefresh, d.selfRefresh = 0, false
	if state == "done" {
		d.lastCycle = r.ID
		if d.ctxr.FloorSource == "" {
			d.floorPending = "first request after a compaction (includes the summary)"
		}
	}
	if d.cycle.req != nil {
		var err error
		if state != "done" {
			err = fmt.Errorf("compaction cycle %s failed: %s", r.ID, errText)
		}
		how := "re-injected after it"
		if r.Injected == "" {
			how = "re-injected into the first request after it (the harness's SessionStart source compact fires with the next turn)"
		}
		d.answer(*d.cycle.req, err, fmt.Sprintf("compaction cycle %s done: handoff %s (hash %s) materialized before /compact and %s", r.ID, filepath.Base(r.Handoff), r.Hash, how))
	}
	d.cycle = nil
	d.to(machine.CycleEnded, "")
}

// onStatusLine turns a status-line reading into context.toml: occupancy from
// current_usage, the floor measured on the first request of a fresh session
// (occupancy minus what that request itself added), reclaimable the rest.
func (d *Driver) onStatusLine(ev hookwire.Event) {
	r, err := state.ParseStatusLine(ev.Payload)
	if err != nil || r.SessionID != d.sess.ID {
		return
	}
	d.applyReading(r, "status line context_window.current_usage (input + cache_creation + cache_read)", ev.ReceivedAt.UTC())
}

// applyReading is the one rule for a context reading, whatever carried it:
// occupancy as read, the floor measured on the first request of a fresh session
// (occupancy minus what that request itself added), reclaimable the rest.
func (d *Driver) applyReading(r state.StatusReading, source string, at time.Time) {
	c := &d.ctxr
	if c.SessionID != d.sess.ID {
		*c = state.Context{SessionID: d.sess.ID}
	}
	c.Occupancy, c.Window, c.Model, c.ReadAt = r.Occupancy, r.Window, r.Model, at
	c.Source = source
	if d.floorPending != "" {
		c.Floor = r.Occupancy - r.Input
		c.FloorSource, c.FloorAt = d.floorPending, at
		d.floorPending = ""
	}
	c.Reclaimable = 0
	if c.FloorSource != "" && c.Occupancy > c.Floor {
		c.Reclaimable = c.Occupancy - c.Floor
	}
	if d.lastCycle != "" {
		d.recordAfter(c.Occupancy)
	}
	d.writeContext()
}

// recordAfter stores the first occupancy read after a finished cycle in its record.
func (d *Driver) recordAfter(occ int) {
	rec := d.S.CompactRecordFile(d.lastCycle)
	if r, err := rec.Read(); err == nil && r.After == 0 {
		r.After = occ
		rec.Write(r)
		d.S.CycleFile().Write(r)
	}
	d.lastCycle = ""
}

func (d *Driver) writeContext() {
	if d.ctxr.SessionID == "" {
		return
	}
	if err := d.S.ContextFile().Write(d.ctxr); err != nil {
		d.logf("context: %v", err)
	}
}

// freshReadingWait bounds how long the context policy waits after a turn end for
// the status line to report the new occupancy before deciding on the old one.
const freshReadingWait = 2 * time.Second

// refreshBefore applies the seat's refresh policy before next is sent: it starts
// a compaction cycle (and returns true) when the policy says refresh, and
// records the decision either way for the policies that decide per message.
func (d *Driver) refreshBefore(next *inbox.Entry) bool {
	rc := d.Cfg.Refresh
	if d.Cfg.Shape == config.ShapeTurn {
		return false // each turn resumes the session in a new process: nothing to refresh
	}
	dec := state.RefreshDecision{Policy: rc.Policy, Next: next.Msg.ID, Processed: d.sinceRefresh, At: d.now().UTC()}
	switch rc.Policy {
	case config.RefreshFixed:
		if d.sinceRefresh < rc.Every {
			return false
		}
		dec.Every = rc.Every
		dec.Decision = "refresh"
		dec.Reason = fmt.Sprintf("%d messages processed since the last refresh (every = %d)", d.sinceRefresh, rc.Every)
	case config.RefreshSelf:
		if !d.selfRefresh {
			return false
		}
		dec.Decision, dec.Reason = "refresh", "the seat asked (pantty handoff request)"
	case config.RefreshContext:
		c := d.ctxr
		if c.Stale() && d.now().Sub(c.LastTurnEnd) < freshReadingWait {
			d.waitT.set(freshReadingWait - d.now().Sub(c.LastTurnEnd))
			return true // not yet: the reading of the last turn is still coming
		}
		if c.FloorSource == "" || c.Window <= c.Floor || !c.ReadAt.After(d.lastCycleEnd) {
			return false // no usable reading since the last cycle: nothing to decide on
		}
		dec.Reclaimable, dec.Floor, dec.Window, dec.StaleRead = c.Reclaimable, c.Floor, c.Window, c.Stale()
		dec.Estimate = (len(next.Msg.Text) + 3) / 4 // ~4 bytes a token
		dec.Threshold = rc.Threshold
		dec.Pressure = float64(c.Reclaimable+dec.Estimate) / float64(c.Window-c.Floor)
		dec.Decision = "send"
		dec.Reason = fmt.Sprintf("(reclaimable %d + next ~%d) / %d = %.2f below threshold %.2f", c.Reclaimable, dec.Estimate, c.Window-c.Floor, dec.Pressure, rc.Threshold)
		switch {
		case dec.Pressure < rc.Threshold:
		case d.sinceRefresh == 0:
			dec.Reason = fmt.Sprintf("(reclaimable %d + next ~%d) / %d = %.2f crosses threshold %.2f, but nothing was processed since the last refresh: another would not make room", c.Reclaimable, dec.Estimate, c.Window-c.Floor, dec.Pressure, rc.Threshold)
		case float64(dec.Estimate)/float64(c.Window-c.Floor) >= rc.Threshold:
			dec.Reason = fmt.Sprintf("the next message alone (~%d of %d) crosses threshold %.2f: a refresh cannot make room for it", dec.Estimate, c.Window-c.Floor, rc.Threshold)
		default:
			dec.Decision = "refresh"
			dec.Reason = fmt.Sprintf("(reclaimable %d + next ~%d) / %d = %.2f crosses threshold %.2f", c.Reclaimable, dec.Estimate, c.Window-c.Floor, dec.Pressure, rc.Threshold)
		}
	default:
		return false
	}
	if err := d.S.RefreshFile(d.now()).Write(dec); err != nil {
		d.logf("refresh decision: %v", err)
	}
	if dec.Decision != "refresh" {
		return false
	}
	d.startCycle(nil, "refresh policy "+rc.Policy+": "+dec.Reason, "")
	return true
}
