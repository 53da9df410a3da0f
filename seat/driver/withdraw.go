package driver

import (
	"fmt"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// withdraw answers `pantty seat drop`: the named messages, or every queued
// board message, become failed with reason dropped — in memory, which is the
// queue maybeSubmit reads, and on disk — unless they are no longer queued (in
// flight or final), which are left as they are and named. The cursor moves
// once, after all of them.
func (d *Driver) withdraw(r state.Request) {
	var w seat.Withdrawal
	var targets []*inbox.Entry
	if r.All {
		for _, e := range d.order {
			if e.Status.State == inbox.StateQueued && e.Msg.From != guard.ReservedSender {
				targets = append(targets, e)
			}
		}
	}
	for _, id := range r.MsgIDs {
		d.addMessage(id) // linked since the last scan: take it in first
		e, ok := d.entries[id]
		if !ok {
			w.Left = append(w.Left, fmt.Sprintf("%s (not in the inbox)", id))
			continue
		}
		targets = append(targets, e)
	}
	now := d.now()
	for _, e := range targets {
		st := e.Status
		if err := seat.WithdrawStatus(d.S, e.Msg, &st, now); err != nil {
			w.Left = append(w.Left, fmt.Sprintf("%s (%v)", e.Msg.ID, err))
			continue
		}
		if err := d.S.WriteStatus(st); err != nil {
			// Not recorded: it stays queued, in memory as on disk.
			d.logf("withdraw %s: %v", e.Msg.ID, err)
			w.Left = append(w.Left, fmt.Sprintf("%s (not recorded: %v)", e.Msg.ID, err))
			continue
		}
		e.Status = st
		w.Add(e.Msg.ID)
	}
	if w.Count > 0 {
		d.logf("withdrew %d queued message(s)", w.Count)
		d.updateCursor()
	}
	res := state.Result{ID: r.ID, OK: true, Detail: w.Summary(), Dropped: w.Count, Left: w.Left, At: d.now().UTC()}
	if err := d.S.ResultFile(r.ID).Write(res); err != nil {
		d.logf("control answer %s: %v", r.ID, err)
	}
}
