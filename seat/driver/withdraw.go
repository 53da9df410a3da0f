package driver

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
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

// writeSettings resolves what this launch lets the model reach, records it in
// authority.toml (status and gates read it), writes the per-launch harness
// settings that carry it, and watches the drop directory when isolation is on.
func (d *Driver) writeSettings() (state.Authority, error) {
	env, err := launch.HarnessEnv(os.Environ(), d.S, d.Cfg, d.Ad.Env(d.S, d.Cfg))
	if err != nil {
		return state.Authority{}, err
	}
	a, err := harness.ResolveAuthority(d.Ad, d.S, d.Cfg, env, d.now())
	if err != nil {
		return a, err
	}
	if err := d.S.AuthorityFile().Write(a); err != nil {
		return a, err
	}
	d.logf("authority: isolation %s (%s)", a.Isolation, a.Why)
	settings, err := hookwire.ClaudeSettings(d.Pantty, d.S, d.Cfg.Activity, a)
	if err != nil {
		return a, err
	}
	if err := d.S.WriteRaw(d.S.SettingsPath(), settings); err != nil {
		return a, err
	}
	if a.Drop != "" && a.Drop != d.drop && d.w != nil {
		if err := d.w.Add(a.Drop); err != nil {
			return a, err
		}
		d.drop = a.Drop
		d.drainDrop() // requests left from before this driver ran
	}
	return a, nil
}

// drainDrop takes every whole request in the drop directory: it is read without
// following links and within its bound, checked, done for this seat, answered
// beside it (<id>.done) and removed. Nothing in it can name another seat.
func (d *Driver) drainDrop() {
	names, err := state.PendingDrops(d.drop)
	if err != nil {
		d.logf("drop: %v", err)
		return
	}
	for _, name := range names {
		path := filepath.Join(d.drop, name)
		r, err := state.ReadDrop(path)
		os.Remove(path)
		ans := state.DropAnswer{At: d.now().UTC()}
		if err == nil {
			ans.Detail, err = d.onDrop(r)
		}
		ans.OK = err == nil
		if err != nil {
			ans.Error = err.Error()
		}
		d.logf("drop %s: %s ok=%v %s%s", name, r.Kind, ans.OK, ans.Detail, ans.Error)
		id := name[:len(name)-len(".req")]
		if werr := state.DropAnswerFile(d.drop, id).Write(ans); werr != nil {
			d.logf("drop answer %s: %v", id, werr)
		}
	}
}

func (d *Driver) onDrop(r state.DropRequest) (string, error) {
	if r.Kind == state.DropRefresh {
		return d.requestRefresh()
	}
	path, err := d.S.Handoff().AddNote(r.Text, d.now())
	if err != nil {
		return "", err
	}
	return "noted in " + filepath.Base(path) + " (it goes into the next handoff)", nil
}
