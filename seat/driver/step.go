package driver

import (
	"fmt"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
)

// recycleStep gives the next step a fresh session (the polecat model: atomic
// steps, no context accumulation): materialize the handoff, start a new
// generation with a new session id, and launch the harness so that its
// SessionStart hook injects the handoff. A crash anywhere re-reads the state
// files and continues from the last completed step.
func (d *Driver) recycleStep(next *inbox.Entry) {
	now := d.now()
	n, err := d.S.BuildNote("step boundary: before "+next.Msg.ID, now)
	if err != nil {
		d.logf("step: %v", err)
		d.blocked = "step handoff: " + err.Error()
		return
	}
	rec, err := d.S.Handoff().Materialize(n)
	if err != nil {
		d.logf("step: %v", err)
		d.blocked = "step handoff: " + err.Error()
		return
	}
	old := d.sess.ID
	d.killHarness()
	d.sess.ID = state.NewSessionID()
	d.sess.Generation++
	d.sess.Why = fmt.Sprintf("step: a fresh session for %s (the previous step ran on %s)", next.Msg.ID, old)
	d.sess.PaneID, d.sess.PanePID = "", 0
	if err := d.S.InjectFile().Write(state.Inject{SessionID: d.sess.ID, Hash: rec.Hash, Why: d.sess.Why, At: now.UTC()}); err != nil {
		d.logf("step inject: %v", err)
	}
	if err := d.saveSession(); err != nil {
		d.logf("step: %v", err)
	}
	d.stepDone = false
	d.logf("step: generation %d, session %s, handoff %s", d.sess.Generation, d.sess.ID, rec.Hash)
	if err := d.launch(nil); err != nil {
		d.logf("step launch: %v", err)
		d.to(machine.LaunchFailed, "step launch failed: "+err.Error())
	}
}
