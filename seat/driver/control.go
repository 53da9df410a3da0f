package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/hookwire"
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

// holder is the id owner.toml records for this driver ("" without a lock:
// a driver under test).
func (d *Driver) holder() string {
	if d.Lock == nil {
		return ""
	}
	return d.Lock.Owner.Holder
}

func (d *Driver) onRequest(r state.Request) {
	d.logf("control request %s: %s %s %s", r.ID, r.Kind, r.Command, r.MsgID)
	if holder := d.holder(); r.To != "" && r.To != holder {
		d.answer(r, fmt.Errorf("%w: the request was for driver %s, and this seat's driver is %s: the seat changed hands since the asker looked", state.ErrOwned, r.To, holder), "")
		return
	}
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
	if why, _ := d.way().notFree(); why != "" {
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
		if errors.Is(err, flight.ErrNotPasted) || errors.Is(err, flight.ErrUnwritten) || errors.Is(err, errRelaunchedUnsent) || errors.Is(err, errServerRefused) {
			// Nothing reached the harness: the outcome is known.
			d.answer(r, fmt.Errorf("not sent: %s: %v", c.Text(), err), "")
			return
		}
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
	ahead, err := d.commandAhead(c)
	if err != nil {
		entered(err)
		return
	}
	d.runAhead(c, ahead, live, entered)
}

// commandAhead writes the command's durable record (the write-ahead rule's
// for the command door): once per command, however many pastes it takes.
func (d *Driver) commandAhead(c guard.Command) (flight.Ahead, error) {
	d.logf("command door: %s (adapter-authored)", c.Text())
	now := d.now()
	ahead, err := flight.WriteAhead(c.Text(), func() error {
		return d.S.CommandFile(now).Write(state.CommandRecord{Command: c.Text(), Author: "adapter", At: now.UTC()})
	})
	if err != nil {
		d.logf("command door: %v", err)
	}
	return ahead, err
}

// runAhead is Run with the command's record already written.
func (d *Driver) runAhead(c guard.Command, ahead flight.Ahead, live func() bool, entered func(error)) {
	// The whole settle: PasteQuiet was measured on board text, not on a
	// command, whose completion list may still be drawing when it shows.
	// Where it was measured, the Enter also waits, past the settle, for
	// the box to show the command and the pane to go quiet, bounded by a
	// second settle: the command door has no Enter retry, and a harness
	// slowed by load (the simulator at load 35) had not committed the
	// paste when the settle ended, so its Enter became a newline.
	caps, full := d.Ad.Caps(), d.Cfg.PasteSettle.Duration
	settle := flight.Wait{Quiet: full}
	switch {
	case caps.CommandSettled != nil:
		settled := caps.CommandSettled
		settle = flight.Wait{Quiet: commandSettlePoll, Every: commandSettlePoll, Limit: commandSettleLimit, Hold: commandSettleHold,
			Cond: func(screen string) bool { return settled(screen, c.Text()) }}
	case caps.PasteQuiet > 0 && caps.Composer != nil:
		settle = flight.Wait{Quiet: full, Limit: full, Cond: d.box().Shows, Still: caps.PasteQuiet, Bound: true}
	}
	d.paste(ahead, settle, live, func(err error) {
		if errors.Is(err, flight.ErrBoxNotFree) && !errors.Is(err, flight.ErrNotPasted) {
			// Pasted, but a dialog came before its Enter: the command waits
			// in the box under it, pantty's own, cleared at the next paste.
			d.strandedCmd = c.Text()
		}
		entered(err)
	})
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

// commandPoll is how often the driver looks again while a command waits: the
// pane and the harness's transcript announce nothing when they change.
const commandPoll = 250 * time.Millisecond

// commandHooks names the hooks that show a command running and done. A
// compaction fires PreCompact as it starts and PostCompact when it is done
// (Claude Code, Codex and the simulator). PreCompact alone is no acceptance:
// Claude Code 2.1.328 fires it and then answers "Not enough messages to
// compact." with no PostCompact (measured 2026-12-03). A command without
// hooks is taken on the harness's recorded answer (Capabilities.CommandAnswer).
var commandHooks = map[string]struct{ start, done string }{"compact": {hookwire.EvPreCompact, hookwire.EvPostCompact}}

// commandDeadline is when a queued request stops waiting for a free seat.
func commandDeadline(r state.Request) time.Time {
	wait := r.Wait.Duration
	if wait == 0 {
		wait = hookwire.DefaultCommandWait
	}
	return r.At.Add(wait)
}

// paneNotFree says why a command must not be pasted now, or "": a turn is
// running (the paste would queue behind it or be read as a prompt), no input
// box is visible (a dialog would take the keys), or the box holds text pantty
// did not put there (a person's draft: the paste would clear or extend it).
func (d *Driver) paneNotFree() (why string, unknown bool) {
	ctx, cancel := d.ctx()
	l, err := d.lookAtBox(ctx)
	cancel()
	if err != nil {
		return "the pane could not be read: " + err.Error(), true
	}
	switch {
	case l.Busy:
		return "a turn is running in the pane", false
	case l.Dialog != "":
		return "the pane shows no input box (" + dialogHold + l.Dialog + ")", false
	case l.Draft != "":
		return fmt.Sprintf("the input box holds text pantty did not put there (%q)", clip(state.Redact(l.Draft), 60)), false
	}
	return "", false
}

// clip cuts s to n runes (flight.Clip: one cut for every line the driver writes).
var clip = flight.Clip

// holdReason says what keeps the loop from reaching the command queue.
func (d *Driver) holdReason() string {
	switch {
	case d.flight != nil:
		return "message " + d.flight.e.Msg.ID + " is in its turn"
	case d.foreignTurn != "":
		return "a turn pantty did not start (a person's) is running"
	case d.cmdRun != nil && d.cmdRun.notPasted != nil && d.cmdHeld != "":
		return d.cmdRun.cmd.Text() + " waits: " + d.cmdHeld
	case d.cmdRun != nil && d.cmdRun.notPasted != nil:
		return d.cmdRun.cmd.Text() + " waits for a free input box: " + d.cmdRun.notPasted.Error()
	case d.cycle != nil:
		return "a compaction cycle is running"
	case d.cmdRun != nil:
		return "the harness has not yet answered " + d.cmdRun.cmd.Text()
	case d.mode.Mode == state.ModeRelay:
		return "a person holds the input (relay mode)"
	case d.blocked != "":
		return d.blocked
	case d.held != "":
		return d.held
	case d.now().Before(d.notBefore):
		return "a provider wait until " + d.notBefore.UTC().Format(time.RFC3339)
	case d.outage != nil && d.now().Before(d.outage.probeAt):
		// The queue is held for a means or transient outage: nothing, a
		// command included, goes to the harness before the next probe.
		return "the queue is held for a " + string(d.outage.class) + " outage: " + d.outageText()
	case d.cmdHeld != "":
		return d.cmdHeld
	}
	return "the seat was not at a turn boundary"
}

// expireCommands refuses, unsent, every queued command whose wait for a free
// seat is over, naming what kept the seat busy.
func (d *Driver) expireCommands() {
	now := d.now()
	keep := d.cmds[:0]
	for _, r := range d.cmds {
		if now.Before(commandDeadline(r)) {
			keep = append(keep, r)
			continue
		}
		what := "/" + r.Command
		if r.Kind == state.CtlCompact {
			what = "the compaction cycle"
		}
		err := fmt.Errorf("not sent: %s after waiting %s for the seat to be free (%s)", what, now.Sub(r.At).Round(time.Second), d.holdReason())
		d.logf("control request %s refused: %v", r.ID, err)
		d.answer(r, err, "")
	}
	d.cmds = keep
}

// armCommandTimer keeps the command timer running while a command waits.
// (onCommandTick may have armed it with a longer interval itself.)
func (d *Driver) armCommandTimer() {
	if (len(d.cmds) > 0 || d.cmdRun != nil) && d.cmdT.C() == nil {
		d.cmdT.set(commandPoll)
	}
}

// onCommandTick expires commands that waited too long for a free seat and reads
// the harness's answer to the command in flight.
func (d *Driver) onCommandTick() {
	d.expireCommands()
	if d.cmdRun == nil {
		return
	}
	// The hook evidence is read first (the loop runs this through timedOut):
	// an accepted /compact also gets a recorded answer ("Compacted …") once
	// it is done.
	f := d.cmdRun
	if f == nil {
		return
	}
	if f.entering {
		if !f.launch.Equal(d.launchAt) {
			// The pane watch that was to send Enter answers no more: it
			// watched a pane that is gone.
			err := fmt.Errorf("the harness was launched again before %s was entered", f.cmd.Text())
			if f.notPasted != nil {
				err = fmt.Errorf("%w: %v", errRelaunchedUnsent, err)
			}
			d.commandEntered(f, err)
		} else if f.notPasted != nil {
			d.repasteCommand(f)
		}
		return
	}
	hooks, hooked := commandHooks[f.cmd.Name()]
	if f.started != "" && d.compactionDone(f) {
		return
	}
	if answer := d.Ad.Caps().CommandAnswer; answer != nil {
		ans, ok, err := answer(d.S, d.Cfg, d.sess.ID, f.cmd, f.sent)
		if err != nil {
			d.logf("command door: reading the harness's answer: %v", err)
		}
		if ok {
			if hooked {
				// Its answer came before its done hook: the harness refused it.
				d.commandRefused(fmt.Sprintf("the %s harness refused %s: %q (no %s hook)", d.Ad.Name(), f.cmd.Text(), firstLine(ans), hooks.done), false)
			} else {
				// The whole answer: /context's first line is only its title.
				d.commandAccepted(fmt.Sprintf("the %s harness ran %s; its answer:\n%s", d.Ad.Name(), f.cmd.Text(), boundAnswer(ans)))
			}
			return
		}
	}
	if d.now().Before(f.until) {
		return
	}
	if f.started != "" {
		if f.req != nil {
			d.commandAccepted(fmt.Sprintf("the %s harness took %s: %s fired (%s) and no refusal came within %s; %s ends it",
				d.Ad.Name(), f.cmd.Text(), hooks.start, f.started, hookwire.CommandAcceptWindow, hooks.done))
			return
		}
		// A cycle's own /compact: watch for a late refusal until the cycle ends.
		d.cmdT.set(commandLatePoll)
		return
	}
	what := "no answer recorded"
	if hooked {
		what = "no " + hooks.start + " hook"
	}
	if f.onServer {
		d.commandLate(f, what)
		return
	}
	ctx, cancel := d.ctx()
	screen, err := d.pane().Screen(ctx)
	cancel()
	if err == nil && d.Ad.Busy(screen) && d.now().Sub(f.sent) < commandBusyCap {
		// Still working on it (Claude's /context counts tokens with the API,
		// busy meanwhile): its answer is late, not missing.
		d.cmdT.set(commandPoll)
		return
	}
	if err != nil {
		d.commandRefused(fmt.Sprintf("%s within %s, and the pane could not be read (%v): whether the %s harness took %s is unknown", what, hookwire.CommandAcceptWindow, err, d.Ad.Name(), f.cmd.Text()), true)
		return
	}
	// The line may still sit in the input box (a lost Enter): it is pantty's
	// own paste, so it is cleared rather than left for the next submission.
	d.clearComposer()
	d.commandRefused(fmt.Sprintf("%s within %s: the %s harness did not take %s%s", what, hookwire.CommandAcceptWindow, d.Ad.Name(), f.cmd.Text(), d.paneTail()), false)
}

// compactionDone asks a harness with no hook after a compaction
// (Capabilities.CompactionDone) whether the /compact in flight, started, has
// finished, and records the answer as the PostCompact event the harness does
// not send; the evidence then runs its ordinary course. It reports whether it
// recorded one.
func (d *Driver) compactionDone(f *cmdFlight) bool {
	done := d.Ad.Caps().CompactionDone
	if done == nil || f.cmd.Name() != "compact" {
		return false
	}
	ok, where, err := done(d.S, d.Cfg, d.sess.ID, f.sent)
	if err != nil {
		d.logf("command door: reading the harness's record of the compaction: %v", err)
	}
	if !ok {
		return false
	}
	payload, _ := json.Marshal(map[string]string{"hook_event_name": hookwire.EvPostCompact, "session_id": d.sess.ID, "compact_summary": where})
	if _, err := d.S.WriteEventNote(hookwire.EvPostCompact, payload, map[string]string{"from": "the " + d.Ad.Name() + " harness's record: " + where}, d.now()); err != nil {
		d.logf("command door: record PostCompact: %v", err)
		return false
	}
	d.drainEvents()
	return true
}

// maxAnswer bounds a command's answer carried in its result file (a state
// file of at most 4 MiB).
const maxAnswer = 1 << 20

// boundAnswer is a harness command's answer, trimmed, cut at maxAnswer with
// the cut said.
func boundAnswer(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxAnswer {
		n := maxAnswer
		for n > 0 && !utf8.RuneStart(s[n]) {
			n-- // never cut a character in two
		}
		return s[:n] + fmt.Sprintf("\n… (cut: %d of %d bytes shown)", n, len(s))
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return clip(strings.TrimSpace(l), 120)
}

// onCommandEvidence follows the command in flight by its hooks: the start hook
// marks it running, the done hook completes it.
func (d *Driver) onCommandEvidence(ev hookwire.Event) {
	f := d.cmdRun
	if f == nil {
		return
	}
	hooks, ok := commandHooks[f.cmd.Name()]
	switch {
	case !ok:
	case ev.Kind == hooks.start:
		f.started, f.blocked = ev.File, ev.Pantty["block"]
	case ev.Kind == hooks.done && f.started != "":
		d.commandAccepted(fmt.Sprintf("the %s harness ran %s: %s and %s fired (%s)", d.Ad.Name(), f.cmd.Text(), hooks.start, hooks.done, ev.File))
	}
}

func (d *Driver) commandAccepted(detail string) {
	f := d.cmdRun
	d.cmdRun, d.cmdHeld = nil, ""
	d.logf("command door: %s", firstLine(detail))
	if f.req != nil {
		d.answer(*f.req, nil, detail)
	}
}

// commandRefused answers the command's request (or fails the cycle that sent
// it) with the harness's own words; unknown marks an answer pantty could not
// observe (exit 4 for the caller).
func (d *Driver) commandRefused(why string, unknown bool) {
	f := d.cmdRun
	d.cmdRun, d.cmdHeld = nil, ""
	d.logf("command door: %s", why)
	if f.req == nil {
		if d.cycle != nil {
			d.endCycle("failed", why)
		}
		return
	}
	err := errors.New(why)
	if unknown {
		err = fmt.Errorf("%w: %s", state.ErrUnobservable, why)
	}
	d.answer(*f.req, err, "")
}
