package driver

import (
	"fmt"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

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
