package driver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// Envelope is the harness's result envelope (claude -p --output-format json).
type Envelope struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	IsError   bool   `json:"is_error"`
	NumTurns  int    `json:"num_turns"`
	SessionID string `json:"session_id"`
	Result    string `json:"result"`
}

// turnProc is the one harness process of a turn-shaped seat.
type turnProc struct {
	e      *inbox.Entry
	cmd    *exec.Cmd
	killed string // why pantty killed it (ceiling, cancelled), "" if it ended by itself
}

// turnDone is what the process's waiter reports to the loop.
type turnDone struct {
	p      *turnProc
	stdout []byte
	stderr []byte
	err    error
}

// maxEnvelope bounds the stdout read from one turn process.
const maxEnvelope = 16 << 20

// setupTurn prepares a turn-shaped seat: there is no pane; the seat is ready
// when the adapter can build a one-turn command.
func (d *Driver) setupTurn() error {
	if d.Ad.Caps().TurnArgv == nil {
		return fmt.Errorf("harness %s cannot run turn-spawned (its adapter has no one-turn command)", d.Ad.Name())
	}
	if err := d.saveSession(); err != nil {
		return err
	}
	d.ready = true
	d.to(machine.Ready, "")
	return nil
}

// deliverTurn starts one harness process for the submission.
func (d *Driver) deliverTurn(e *inbox.Entry, sub guard.Submission) {
	resume, err := d.Ad.SessionExists(d.S, d.Cfg, d.sess.ID)
	var auth state.Authority
	if err == nil {
		auth, err = d.writeSettings()
	}
	var argv []string
	if err == nil {
		argv, err = d.Ad.Caps().TurnArgv(harness.Launch{Seat: d.S, Config: d.Cfg, SessionID: d.sess.ID, Resume: resume,
			Settings: d.S.SettingsPath(), Pantty: d.Pantty, Authority: auth})
	}
	if err != nil {
		d.turnStartFailed(e, err)
		return
	}
	env, err := launch.HarnessEnv(os.Environ(), d.S, d.Cfg, d.Ad.Env(d.S, d.Cfg))
	if err == nil {
		env = auth.WithDrop(env)
		argv[0], err = d.resolveBinary(argv[0], env["PATH"])
	}
	if err != nil {
		d.turnStartFailed(e, err)
		return
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = d.Cfg.Workdir, state.EnvList(env)
	cmd.Stdin = strings.NewReader(sub.Text())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limitWriter{w: &out, n: maxEnvelope}, &limitWriter{w: &errb, n: 64 << 10}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		d.turnStartFailed(e, err)
		return
	}
	p := &turnProc{e: e, cmd: cmd}
	d.turn = p
	d.sess.Launches++
	d.sess.LaunchedAt = d.now().UTC()
	d.sess.Resumed = resume
	d.saveSession()
	go func() {
		err := cmd.Wait()
		d.turnDone <- turnDone{p: p, stdout: out.Bytes(), stderr: errb.Bytes(), err: err}
	}()
	e.Status.SubmittedAt = d.now().UTC()
	d.to(machine.Spawned, e.Msg.ID)
}

// turnStartFailed is a means failure (binary, resume path): the message waits,
// the failure is visible, and the driver retries after a pause instead of
// spinning.
func (d *Driver) turnStartFailed(e *inbox.Entry, err error) {
	d.logf("turn process for %s did not start: %v", e.Msg.ID, err)
	d.flight = nil
	e.Status.NotBefore = d.now().Add(turnRetryPause).UTC()
	d.requeue(e, "the harness process did not start: "+err.Error())
	d.waitT.set(turnRetryPause)
}

// turnRetryPause is the pause after a turn process that did not start.
const turnRetryPause = 10 * time.Second

// onTurnDone reads the result envelope and acts on machine.AfterTurnResult:
// processed only when it says success, not an error, and at least one model
// turn.
func (d *Driver) onTurnDone(r turnDone) {
	if d.turn == r.p {
		d.turn = nil
	}
	if r.p.killed != "" || d.flight == nil || d.flight.e != r.p.e {
		return // cancelled or cut off at the ceiling: already settled
	}
	e := r.p.e
	d.flight = nil
	var env Envelope
	perr := json.Unmarshal(lastJSON(r.stdout), &env)
	switch machine.AfterTurnResult(machine.TurnResult{Refused: d.turnRefusal != "", Envelope: perr == nil,
		Success: env.Subtype == "success" && !env.IsError, Turns: env.NumTurns}) {
	case machine.ByFailure:
		name, text, _ := strings.Cut(d.turnRefusal, ": ")
		d.onTurnFailed(e, name, text)
	case machine.NoEnvelope:
		d.finish(e, inbox.StateFailed, inbox.ReasonWorkError, fmt.Sprintf("no result envelope (%v; exit %v): %s", perr, r.err, state.Truncate(string(r.stderr), 300)), "")
	case machine.Processed:
		d.keepReply(e, env.Result)
		e.Status.SessionID = env.SessionID
		d.learnSessionID(env.SessionID) // a self-naming harness names its session in the envelope
		d.finish(e, inbox.StateProcessed, "", "", fmt.Sprintf("envelope: success, %d turn(s), session %s", env.NumTurns, env.SessionID))
	case machine.NoTurn:
		d.finish(e, inbox.StateFailed, hookwire.ReasonNoTurn, "the envelope says success with zero model turns: not processing", "")
	default:
		d.finish(e, inbox.StateFailed, inbox.ReasonWorkError, fmt.Sprintf("envelope %s is_error=%v: %s", env.Subtype, env.IsError, state.Truncate(env.Result, 300)), "")
	}
	d.turnRefusal = ""
}

// killTurn ends the turn process's whole group.
func (d *Driver) killTurn(why string) {
	p := d.turn
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.killed = why
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	d.turn = nil
}

// lastJSON returns the last line of out that looks like a JSON object (the
// envelope), tolerating anything the harness printed before it.
func lastJSON(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if l := bytes.TrimSpace(lines[i]); len(l) > 0 && l[0] == '{' {
			return l
		}
	}
	return bytes.TrimSpace(out)
}

// limitWriter keeps at most n bytes and discards the rest (a runaway harness
// must not grow the driver without bound).
type limitWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := len(p)
		if k > l.n {
			k = l.n
		}
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// providerRefused puts a refused message back in the queue behind a provider
// block: a wait shared by every seat on that provider (providers.toml), never a
// failure of the seat or its work; maybeSubmit honours it.
func (d *Driver) providerRefused(e *inbox.Entry, errName, text string) {
	now := d.now()
	rc := d.Cfg.Recovery
	b := outage.RefusalBlock(d.S.Name, errName, text, now, rc.ProviderReprobe.Duration, rc.ProviderMaxWait.Duration)
	if err := outage.RecordBlock(d.S.Home, d.Cfg.Provider, b, now); err != nil {
		d.logf("provider block for %s: %v (kept in this driver)", d.Cfg.Provider, err)
	}
	e.Status.NotBefore = b.Until
	e.Status.Reason = outage.ReasonProviderRefusal
	d.requeue(e, fmt.Sprintf("provider %s refused (%s): %s", d.Cfg.Provider, errName, text))
	d.to(machine.ProviderRefused, fmt.Sprintf("provider %s: %s until %s: %s", d.Cfg.Provider, errName, b.Until.Format(time.RFC3339), b.Text))
}

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

// startProbe proves capability, not presence: a prompt goes through the same
// board path, and the probe passes only when a model turn really ran for it and
// its reply carries the probe's token.
func (d *Driver) startProbe(r state.Request) {
	b := make([]byte, 6)
	rand.Read(b)
	id := "probe-" + hex.EncodeToString(b)
	text := "pantty liveness probe. Reply with the token " + id + " and nothing else; do not run tools."
	if err := seat.EnqueueInternal(d.S, id, text, d.now()); err != nil {
		d.answer(r, fmt.Errorf("probe: %v", err), "")
		return
	}
	if d.probes == nil {
		d.probes = map[string]state.Request{}
	}
	d.probes[id] = r
	d.addMessage(id)
}

func (d *Driver) answerProbe(r state.Request, e *inbox.Entry) {
	switch {
	case e.Status.State != inbox.StateProcessed:
		d.answer(r, fmt.Errorf("probe %s: no processed turn (%s %s)", e.Msg.ID, e.Status.State, e.Status.Reason), "")
	case !strings.Contains(e.Status.Reply, e.Msg.ID):
		d.answer(r, fmt.Errorf("probe %s: a turn ran but its reply did not carry the token", e.Msg.ID), "")
	default:
		d.answer(r, nil, fmt.Sprintf("probe %s: a model turn ran and its reply carried the token (turn end %s)", e.Msg.ID, e.Status.TurnEnd))
	}
}

// closedByTranscript closes e as processed when the harness's transcript holds
// its turn (this paste: id and nonce) with a reply, and reports whether it did.
func (d *Driver) closedByTranscript(e *inbox.Entry, why string) bool {
	sess := d.lookupSession(e)
	if sess == "" {
		return false
	}
	found, where, err := d.Ad.FindTurn(d.S, d.Cfg, sess, e.Msg.ID, e.Status.Nonce)
	if err != nil {
		d.logf("transcript lookup for %s: %v", e.Msg.ID, err)
		return false
	}
	if !found {
		return false
	}
	d.logf("message %s: %s, but its turn is in the harness transcript: processed", e.Msg.ID, why)
	if reply := d.Ad.Caps().TurnReply; reply != nil {
		// The reply from the same records, or the message would end with
		// none (its Stop, when it comes, finds it final).
		if text, err := reply(d.S, d.Cfg, sess, e.Msg.ID, e.Status.Nonce); err != nil {
			d.logf("the reply of %s in the transcript: %v", e.Msg.ID, err)
		} else if text != "" {
			d.keepReply(e, text)
		}
	}
	d.finish(e, inbox.StateProcessed, "", "turn found in the harness transcript ("+why+")", "transcript:"+where)
	return true
}

// checkLostTurnEnd runs on the heartbeat tick: a submitted message whose turn no
// longer runs in the pane, and whose Stop never came, is looked up in the
// transcript instead of waiting for its ceiling. Not while a cancel watches
// the pane: the cancel settles the message.
func (d *Driver) checkLostTurnEnd() {
	fl := d.flight
	if fl == nil || fl.e.Status.State != inbox.StateSubmitted || !d.ready || d.Cfg.Shape == config.ShapeTurn || d.cancel != nil ||
		d.now().Sub(fl.e.Status.SubmittedAt) < foreignSettle || !d.paneShowsNoTurn() {
		return
	}
	d.closedByTranscript(fl.e, "its turn end never arrived as an event")
}

// lookupSession is the session whose records can hold e's paste: the one bound
// to it, else the seat's; "" when e was never pasted with a nonce or no session
// is known.
func (d *Driver) lookupSession(e *inbox.Entry) string {
	if e == nil || e.Status.Nonce == "" {
		return ""
	}
	if e.Status.SessionID != "" {
		return e.Status.SessionID
	}
	return d.sess.ID
}

// promptRecorded reports whether the harness's records hold e's paste (its id
// and nonce in a user row), turn finished or not, and where; false when the
// adapter cannot tell (no Capabilities.FindPrompt) or the lookup failed.
func (d *Driver) promptRecorded(e *inbox.Entry) (bool, string) {
	findPrompt := d.Ad.Caps().FindPrompt
	sess := d.lookupSession(e)
	if findPrompt == nil || sess == "" {
		return false, ""
	}
	found, where, err := findPrompt(d.S, d.Cfg, sess, e.Msg.ID, e.Status.Nonce)
	if err != nil {
		d.logf("prompt lookup for %s: %v", e.Msg.ID, err)
		return false, ""
	}
	return found, where
}

// requeueUnlessReceived re-queues a paste that has no submission evidence and
// no finished turn. When the harness recorded its prompt all the same (the
// UserPromptSubmit event was lost, not the paste) it reached the model, so it
// is resubmitted once, marked, like a turn lost in a crash — never re-sent
// unmarked. It reports whether the prompt was recorded.
func (d *Driver) requeueUnlessReceived(e *inbox.Entry, detail string) bool {
	if ok, where := d.promptRecorded(e); ok {
		d.logf("message %s: no submission evidence, but the harness recorded its prompt (%s): its turn was lost", e.Msg.ID, where)
		d.resubmitOrFail(e, "resubmission: the harness recorded the prompt, but its evidence and turn end were lost")
		return true
	}
	d.requeue(e, detail)
	return false
}

// resubmitOrFail re-queues e as pantty's one marked resubmission, or fails it
// lost when it was resubmitted already.
func (d *Driver) resubmitOrFail(e *inbox.Entry, detail string) {
	if e.Status.Resubmits == 0 {
		e.Status.Resubmits = 1
		d.requeue(e, detail)
		return
	}
	d.finish(e, inbox.StateFailed, inbox.ReasonLost, "the resubmitted turn was lost as well; 'pantty seat retry "+d.S.Name+" "+e.Msg.ID+"' queues it again (the model may have seen it twice already)", "")
}

// syncTimers sets the flight's two timers from the state they belong to
// (machine.Deadlines): the evidence timer while a pasted message awaits its
// submission evidence, the turn ceiling while its turn runs, neither while a
// cancel decides. The loop calls it before every wait, so a handler changes
// the state and never arms or stops these timers itself (before, they were
// set or stopped by hand in six files, and a path that forgot left a message
// with no timer at all).
func (d *Driver) syncTimers() {
	var f machine.Flight
	if fl := d.flight; fl != nil {
		st := fl.e.Status
		f = machine.Flight{Submitting: st.State == inbox.StateSubmitting, Submitted: st.State == inbox.StateSubmitted,
			Cancelling: d.cancel != nil && d.cancel.fl == fl, TurnShape: d.Cfg.Shape == config.ShapeTurn,
			LookFrom: fl.lookFrom, SubmittedAt: st.SubmittedAt, CeilingSpent: fl.ceilingSpent,
			RetryingSince: fl.retryingSince, RetryBudget: d.Ad.Caps().RetryBudget}
	}
	evidence, ceiling := machine.Deadlines(f, d.Cfg.SubmitTimeout.Duration, d.Cfg.TurnCeiling.Duration)
	now := d.now()
	d.evidenceT.setAt(evidence, now)
	d.ceilingT.setAt(ceiling, now)
}

// timer is a stoppable one-shot whose channel is nil while it is not armed, so a
// select on it waits forever instead of firing a stale tick.
type timer struct {
	t  *time.Timer
	at time.Time // the deadline setAt armed it for; zero after set or stop
}

func (t *timer) C() <-chan time.Time {
	if t.t == nil {
		return nil
	}
	return t.t.C
}

func (t *timer) set(d time.Duration) {
	t.stop()
	t.t = time.NewTimer(d)
}

// setAt makes the timer fire at the deadline at (now on the driver's clock),
// or stops it when at is zero; a timer already armed for at is left as it is.
func (t *timer) setAt(at, now time.Time) {
	switch {
	case at.IsZero():
		t.stop()
	case t.t == nil || !t.at.Equal(at):
		t.set(max(at.Sub(now), 0))
		t.at = at
	}
}

func (t *timer) stop() {
	if t.t != nil {
		t.t.Stop()
		t.t = nil
	}
	t.at = time.Time{}
}
