package driver

import (
	"os"
	"path/filepath"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

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
