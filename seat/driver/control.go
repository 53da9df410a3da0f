package driver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// drainControl answers every request waiting in control/. Each is schema-checked
// again here (the file could have been written by anything that can write the
// directory), acted on, answered in control/done/, and removed.
func (d *Driver) drainControl() {
	names, err := d.S.PendingRequests()
	if err != nil {
		d.logf("control: %v", err)
		return
	}
	for _, name := range names {
		id := strings.TrimSuffix(name, ".toml")
		f := d.S.RequestFile(id)
		r, err := f.Read()
		if err == nil {
			err = r.Validate()
		}
		if err == nil && r.ID != id {
			err = fmt.Errorf("request id %q does not match its file name", r.ID)
		}
		os.Remove(f.Path())
		if err != nil {
			d.logf("control %s refused: %v", name, err)
			d.answer(state.Request{ID: id}, err, "")
			continue
		}
		d.onRequest(r)
		if d.exit != nil {
			return
		}
	}
}

func (d *Driver) answer(r state.Request, err error, detail string) {
	res := state.Result{ID: r.ID, OK: err == nil, Detail: detail, At: d.now().UTC()}
	if err != nil {
		res.Error, res.Unknown = err.Error(), errors.Is(err, state.ErrUnobservable)
	}
	if werr := d.S.ResultFile(r.ID).Write(res); werr != nil {
		d.logf("control answer %s: %v", r.ID, werr)
	}
}

func (d *Driver) onRequest(r state.Request) {
	d.logf("control request %s: %s %s %s", r.ID, r.Kind, r.Command, r.MsgID)
	switch r.Kind {
	case state.CtlCommand:
		// Re-check the allow-list here: the driver trusts no file.
		if _, err := harness.NewCommand(d.Ad, r.Command, r.Args); err != nil {
			d.answer(r, err, "")
			return
		}
		// Commands run at the next turn boundary, like messages, but first.
		d.cmds = append(d.cmds, r)
	case state.CtlCancel:
		if d.flight == nil {
			d.answer(r, fmt.Errorf("no turn in flight"), "")
			return
		}
		id := d.flight.e.Msg.ID
		d.cancelTurn(inbox.ReasonCancelled, func(err error) { d.answer(r, err, "cancelled message "+id) })
	case state.CtlCompact:
		d.cmds = append(d.cmds, r)
	case state.CtlProbe:
		d.startProbe(r)
	case state.CtlRelay:
		d.onRelayRequest(r)
	case state.CtlRefresh:
		detail, err := d.requestRefresh()
		d.answer(r, err, detail)
	case state.CtlRetry:
		d.answer(r, d.retry(r.MsgID), "re-queued "+r.MsgID)
	case state.CtlWithdraw:
		d.withdraw(r)
	case state.CtlStop:
		d.to(machine.StopAsked, "")
		d.killTurn("stopped")
		d.killHarness()
		d.answer(r, nil, "harness and driver stopped")
		code := 0
		d.exit = &code
	case state.CtlRelease:
		d.answer(r, nil, "driver released the seat; the harness keeps running")
		code := 0
		d.exit = &code
	case state.CtlTestBlock:
		if os.Getenv(state.TestHooksEnv) != "1" {
			d.answer(r, fmt.Errorf("test hooks are off in this driver (%s is not 1)", state.TestHooksEnv), "")
			return
		}
		d.answer(r, nil, "the work loop blocks now, forever")
		d.logf("test hook: the work loop blocks forever (its heartbeat will go stale)")
		for {
			time.Sleep(time.Hour) // a timer, so the runtime never reports a deadlock
		}
	}
}

// requestRefresh takes the seat's own refresh request (self policy only).
func (d *Driver) requestRefresh() (string, error) {
	if d.Cfg.Refresh.Policy != config.RefreshSelf {
		return "", fmt.Errorf("this seat's refresh policy is %q, not \"self\": the request is recorded in driver.log only", d.Cfg.Refresh.Policy)
	}
	d.selfRefresh = true
	return "refresh requested: the driver runs the compaction cycle at the next turn boundary", nil
}

// retry re-queues a failed message (RetryMessage's rule, applied by the driver).
func (d *Driver) retry(id string) error {
	e, ok := d.entries[id]
	if !ok {
		return fmt.Errorf("no message %q in the inbox", id)
	}
	if e.Status.State != inbox.StateFailed {
		return seat.RetryStatus(&inbox.Status{ID: id, State: e.Status.State}) // its refusal, nothing changed
	}
	if !d.commitStatus(e, func(st *inbox.Status) { _ = seat.RetryStatus(st) }) {
		// Not re-queued: the answer must be what the files say.
		return fmt.Errorf("not re-queued: %s", d.unwritten.cause())
	}
	return nil
}

// runCommand sends the first queued adapter command through the command door,
// once the pane is free: never into a running turn or over a person's draft.
// While it is not, the command stays first in the queue (messages wait behind
// it) until its wait is over (expireCommands).
func (d *Driver) runCommand() {
	r := d.cmds[0]
	if d.Cfg.Shape == config.ShapeTurn {
		d.cmds = d.cmds[1:]
		d.answer(r, fmt.Errorf("a turn-spawned seat has no live session to send %s to (no command door on this path)", r.Kind), "")
		return
	}
	if why, _ := d.paneNotFree(); why != "" {
		if why != d.cmdHeld {
			d.logf("control request %s waits: %s", r.ID, why)
		}
		d.cmdHeld = why
		return
	}
	d.cmds = d.cmds[1:]
	if r.Kind == state.CtlCompact {
		d.startCycle(&r, "requested by 'pantty seat compact'", r.Args)
		return
	}
	c, err := harness.NewCommand(d.Ad, r.Command, r.Args)
	if err != nil {
		d.answer(r, err, "")
		return
	}
	d.sendCommand(c, &r, func(err error) {
		d.answer(r, fmt.Errorf("%w: paste %s: %v", state.ErrUnobservable, c.Text(), err), "")
		d.checkHarness("paste failed")
	})
}

// Run is the command door: it types an adapter-authored command into the
// pane and calls entered, on the loop, once Enter went or with why it did
// not; live says whether the command is still wanted when Enter is due (a
// cycle can end while the box settles: then the box is cleared instead).
// Only Command values reach it; board text cannot (it is a Submission).
func (d *Driver) Run(c guard.Command, live func() bool, entered func(error)) {
	d.logf("command door: %s (adapter-authored)", c.Text())
	now := d.now()
	if err := d.S.CommandFile(now).Write(state.CommandRecord{Command: c.Text(), Author: "adapter", At: now.UTC()}); err != nil {
		d.logf("command record: %v", err)
	}
	settled := d.Ad.Caps().CommandSettled
	if settled == nil {
		err := d.paste(c.Text())
		if errors.Is(err, errBoxNotFree) && !errors.Is(err, errNotPasted) {
			// Pasted, but a dialog came before its Enter: the command waits
			// in the box under it, pantty's own, cleared at the next paste.
			d.strandedCmd = c.Text()
		}
		entered(err)
		return
	}
	d.pasteSettled(c.Text(), settled, live, entered)
}

// commandSettleLimit bounds the wait for a pasted command to settle in the
// input box (Capabilities.CommandSettled); commandSettlePoll is the look
// interval: a pane announces no change. commandSettleHold is how long the
// settled screen must stay before Enter: Gemini CLI 0.61.0 drew the filtered
// completion list before its key handler used it — Enter 50–100 ms after
// the list showed ran /clear in 3 of 3 tries, Enter after the list had held
// 300 ms ran /compress in 5 of 5 under two CPU-burning loops (measured
// 2026-12-04). Under CI's full load (2026-12-04) a 300 ms hold still ran
// /clear once (SessionStart source clear, a new session): the hold is 1 s,
// and the limit leaves room for it.
const (
	commandSettleLimit = 5 * time.Second
	commandSettlePoll  = 50 * time.Millisecond
	commandSettleHold  = time.Second
)

// pasteSettled pastes a command and sends Enter only once the pane shows it
// settled: the box holding exactly text and no other completion Enter could
// take. If it does not settle, the box is cleared and nothing is entered.
// The looks run in a pane watch: the loop goes on meanwhile (up to
// commandSettleLimit), and the boundary holds, since a command is in flight.
func (d *Driver) pasteSettled(text string, settled func(screen, text string) bool, live func() bool, entered func(error)) {
	ctx, cancel := d.ctx()
	defer cancel()
	if err := d.fillBox(ctx, text); err != nil {
		entered(err)
		return
	}
	look := paneLook{quiet: commandSettlePoll, every: commandSettlePoll, limit: commandSettleLimit, hold: commandSettleHold,
		cond: func(screen string) bool { return settled(screen, text) }}
	d.watchPane(look, func(ok bool) {
		if !live() {
			d.clearComposer()
			return
		}
		if !ok {
			d.clearComposer()
			entered(fmt.Errorf("the pane did not show %s settled in the input box within %s (a completion Enter would take instead): not entered", text, commandSettleLimit))
			return
		}
		ctx, cancel := d.ctx()
		defer cancel()
		entered(d.tm.SendKeys(ctx, d.sess.PaneID, "Enter"))
	})
}
