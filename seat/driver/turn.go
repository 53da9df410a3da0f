package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
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
