package measure

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/gates"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
)

// opLimit bounds each step of a contract run that waits for the harness: a
// turn, a cancel, a compaction cycle, a relaunch.
const opLimit = 2 * time.Minute

// contractRun is one battery over a started throwaway seat.
type contractRun struct {
	t      harness.MeasureRig
	th     *throwaway
	artDir string
	on     string // the transport the seat runs on
	say    func(string, ...any)
}

// Contract measures the five-operation contract (submit → turn end, cancel,
// context, the compaction cycle, liveness) and resume for t on pantty's own
// path — a throwaway seat driven by the real driver on o.Transport (tmux when
// ""), against the harness's loopback stand-in — and writes
// facts/<harness>/<version>/contract.toml (contract-<transport>.toml for
// another path: state.ContractPath) under home with one artifact per row. It is written once, against
// harness.MeasureRig: a harness is measurable when its adapter has a rig.
//
// A row that was measured and not met is written as unmet (that is a fact);
// an error means the instrument itself failed and nothing is written.
func Contract(home string, t harness.MeasureRig, o Options) (state.Contract, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	say := func(f string, a ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(f, a...))
		}
	}
	on := cmp.Or(o.Transport, config.TransportTmux)
	th, err := startThrowaway(t, o, on)
	if err != nil {
		return state.Contract{}, err
	}
	defer th.close()
	build := th.det.Build()
	version := gates.VersionOf(build)
	if version == "" {
		return state.Contract{}, fmt.Errorf("measure contract: %s said %q for its version: no version number to file the facts under", t.Harness, build)
	}
	stamp := o.Now.UTC().Format("20060102T150405")
	if on != config.TransportTmux {
		stamp = on + "-" + stamp // both paths measured with one clock keep their own
	}
	artDir := filepath.Join(filepath.Dir(state.ContractPath(home, t.Harness, version, on)), "artifacts-"+stamp)
	if err := os.MkdirAll(artDir, fsatomic.DirMode); err != nil {
		return state.Contract{}, err
	}
	r := &contractRun{t: t, th: th, artDir: artDir, on: on, say: say}
	c := state.Contract{Harness: t.Harness, Version: version, Build: build, Transport: on, Tmux: tmuxVersion(), Pantty: o.PanttyVersion,
		Path:     pathWords(on),
		Provider: "loopback stand-in (no key, no cost)", AsOf: o.Now.UTC(), Revisit: o.Now.Add(o.Revisit).UTC(),
		FailAfter: o.Now.Add(o.Fail).UTC(), Artifacts: artDir}
	for _, step := range []struct {
		name string
		run  func() (state.ContractRow, string, error)
	}{
		{"submit", r.submit}, {"context", r.context}, {"cancel", r.cancel},
		{"compaction", r.compaction}, {"resume", r.resume}, {"liveness", r.liveness},
	} {
		say("%s", step.name)
		row, artifact, err := step.run()
		if err != nil {
			return c, fmt.Errorf("measure contract: %s: %w", step.name, err)
		}
		row.Name = step.name
		row.Artifact = filepath.Join(artDir, step.name+".txt")
		if err := os.WriteFile(row.Artifact, []byte(artifact), 0o600); err != nil {
			return c, err
		}
		c.Rows = append(c.Rows, row)
		say("  %s: met %v: %s", step.name, row.Met, row.Value)
	}
	if err := state.ContractFile(home, t.Harness, version, on).Write(c); err != nil {
		return c, err
	}
	return c, nil
}

// pathWords says what a transport's submission path is, for a measurement's
// path.
func pathWords(on string) string {
	if on == config.TransportAppServer {
		return "the harness's app server (transport = \"app-server\", experimental): turn/start on the seat's thread, turn/interrupt, thread/compact/start, pantty driver"
	}
	return "tmux " + tmuxVersion() + ": load-buffer + paste-buffer -p (bracketed) + settle + send-keys Enter, pantty driver"
}

// send stores a message through the board door (the guard, the driver's paste,
// its evidence) and waits until it is final.
func (r *contractRun) send(id, text string) (inbox.Status, error) {
	s := r.th.s
	if _, err := s.Enqueue(guard.Message{ID: id, Text: text}, 0, time.Now()); err != nil {
		return inbox.Status{}, err
	}
	if err := seat.WaitFinal(s, []string{id}, opLimit); err != nil {
		return inbox.Status{}, err
	}
	return s.ReadStatus(id)
}

// turnsFor returns the model turns whose new input carried message id's header.
func (r *contractRun) turnsFor(id string) []harness.StandinRequest {
	var out []harness.StandinRequest
	for _, q := range r.th.det.ModelRequests() {
		if q.Kind == "turn" && strings.Contains(q.NewInput, "msg="+id+" ") {
			out = append(out, q)
		}
	}
	return out
}

func describe(st inbox.Status, turns []harness.StandinRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: state=%s reason=%s evidence=%s turn_end=%s attempts=%d submitted_at=%s ended_at=%s detail=%q\n",
		st.State, st.Reason, st.Evidence, st.TurnEnd, st.Attempts, st.SubmittedAt.Format(time.RFC3339Nano), st.EndedAt.Format(time.RFC3339Nano), st.Detail)
	fmt.Fprintf(&b, "model turns carrying it: %d\n", len(turns))
	for _, q := range turns {
		fmt.Fprintf(&b, "  %s %s %q\n", q.At.Format(time.RFC3339Nano), q.Kind, firstLine(q.NewInput))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// submit: one message, its submission evidence bound by the guard header and
// its turn end recorded, and exactly one model turn carrying it.
func (r *contractRun) submit() (state.ContractRow, string, error) {
	const id = "contract-submit"
	st, err := r.send(id, "pantty contract: submit and turn end")
	if err != nil {
		return state.ContractRow{}, "", err
	}
	turns := r.turnsFor(id)
	met := st.State == inbox.StateProcessed && st.Evidence != "" && st.TurnEnd != "" && len(turns) == 1
	value := fmt.Sprintf("%s; evidence %s; turn end %s; %d model turn(s) carried it; submitted → ended %s",
		st.State, filepath.Base(st.Evidence), filepath.Base(st.TurnEnd), len(turns), st.EndedAt.Sub(st.SubmittedAt).Round(time.Millisecond))
	return state.ContractRow{Met: met, Value: value,
		How: "a message through the board door; met when processed on its own evidence and turn end and exactly one model turn carried it"}, describe(st, turns), nil
}

// context: the reading after a turn decomposes occupancy into a fixed floor
// (measured on a fresh session) and a reclaimable part, with the window; and
// it is the current request's size, not a running total: one more short turn
// grows it by far less than the floor (a cumulative total would grow by the
// whole request again, floor included).
func (r *contractRun) context() (state.ContractRow, string, error) {
	first, err := r.freshReading(time.Time{})
	if err != nil {
		return state.ContractRow{}, "", err
	}
	const id = "contract-context"
	st, err := r.send(id, "pantty contract: one more short turn for a second context reading")
	if err != nil {
		return state.ContractRow{}, "", err
	}
	second, err := r.freshReading(st.SubmittedAt)
	if err != nil {
		return state.ContractRow{}, "", err
	}
	decomposed := func(c state.Context) bool {
		return c.Floor > 0 && c.Occupancy >= c.Floor && c.Reclaimable == c.Occupancy-c.Floor && c.Window > 0
	}
	current := second.Occupancy-first.Occupancy < first.Floor
	met := decomposed(first) && decomposed(second) && current && st.State == inbox.StateProcessed
	value := fmt.Sprintf("occupancy %d = floor %d (%s) + reclaimable %d of window %d; after one more turn %d (+%d, %s); source %s",
		first.Occupancy, first.Floor, orNone(first.FloorSource), first.Reclaimable, first.Window, second.Occupancy,
		second.Occupancy-first.Occupancy, map[bool]string{true: "the current request's size", false: "grew by a floor or more: a running total"}[current],
		orNone(second.Source))
	art := fmt.Sprintf("context.toml after the submit row's turn:\n%+v\nafter %s:\n%+v\n", first, id, second)
	return state.ContractRow{Met: met, Value: value,
		How: "context.toml after a turn and after one more short turn; met when occupancy = floor + reclaimable with a measured floor and a window, and the second reading grew by less than the floor"}, art, nil
}

// freshReading waits for a context reading with a measured floor taken
// after since (a turn's submission: the reading then carries its request).
func (r *contractRun) freshReading(since time.Time) (state.Context, error) {
	var c state.Context
	err := seat.WaitUntil(r.th.s, opLimit/4, func() bool {
		var err error
		c, err = r.th.s.ContextFile().Read()
		return err == nil && c.FloorSource != "" && c.ReadAt.After(since)
	})
	if err != nil {
		return c, fmt.Errorf("no context reading after the turn: %w (last: %+v)", err, c)
	}
	return c, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// cancel: a slow turn stopped from outside, the message failed as cancelled,
// and the next message processed alone (the input box was left clean).
func (r *contractRun) cancel() (state.ContractRow, string, error) {
	s := r.th.s
	if r.t.Slow == nil {
		return state.ContractRow{Value: "not measured: the rig cannot make a turn slow",
			How: "needs a slow turn"}, "the rig has no Slow marker\n", nil
	}
	const id, after = "contract-cancel", "contract-after-cancel"
	if _, err := s.Enqueue(guard.Message{ID: id, Text: "pantty contract: a slow turn to cancel " + r.t.Slow(10*time.Second)}, 0, time.Now()); err != nil {
		return state.ContractRow{}, "", err
	}
	if err := seat.WaitUntil(s, opLimit, func() bool {
		st, err := s.ReadStatus(id)
		return err == nil && st.State == inbox.StateSubmitted
	}); err != nil {
		return state.ContractRow{}, "", fmt.Errorf("the slow turn never started: %w", err)
	}
	began := time.Now()
	res, err := s.Ask(state.Request{Kind: state.CtlCancel}, opLimit)
	took := time.Since(began)
	if err != nil {
		res = state.Result{Error: err.Error()} // the driver's answer: the cancel did not hold
	}
	if err := seat.WaitFinal(s, []string{id}, opLimit); err != nil {
		return state.ContractRow{}, "", err
	}
	st, _ := s.ReadStatus(id)
	next, err := r.send(after, "pantty contract: the next message after a cancel")
	if err != nil {
		return state.ContractRow{}, "", err
	}
	turns := r.turnsFor(after)
	clean := len(turns) == 1 && !strings.Contains(turns[0].NewInput, "a slow turn to cancel")
	met := res.OK && st.State == inbox.StateFailed && st.Reason == inbox.ReasonCancelled && next.State == inbox.StateProcessed && clean
	value := fmt.Sprintf("cancel answered ok=%v in %s (%s); message %s/%s; next message %s, its model turn %s",
		res.OK, took.Round(time.Millisecond), orNone(firstLine(res.Detail+res.Error)), st.State, st.Reason, next.State, map[bool]string{true: "alone (input box clean)", false: "not alone"}[clean])
	art := "cancelled:\n" + describe(st, r.turnsFor(id)) + "\nnext:\n" + describe(next, turns) + fmt.Sprintf("\ncancel answer: %+v\n", res)
	return state.ContractRow{Met: met, Value: value,
		How: "a turn made slow at the model, cancelled from outside while running; met when the cancel is verified, the message fails cancelled and the next message runs alone"}, art, nil
}

// compaction: the cycle materializes the handoff (with a procedure note that
// exists nowhere else), compacts at pantty's boundary, and that note reaches a
// model request after it.
func (r *contractRun) compaction() (state.ContractRow, string, error) {
	s := r.th.s
	note := "contract procedure note " + fmt.Sprint(time.Now().UnixNano()) + ": run the linter before the tests"
	if _, err := s.Handoff().AddNote(note, time.Now()); err != nil {
		return state.ContractRow{}, "", err
	}
	res, err := s.Ask(state.Request{Kind: state.CtlCompact}, opLimit)
	if err != nil {
		res = state.Result{Error: err.Error()} // the driver's answer: the cycle failed
	}
	cyc, _ := s.CycleFile().Read()
	cycleEnd := time.Now()
	const after = "contract-after-compact"
	next, err := r.send(after, "pantty contract: the first message after a compaction")
	if err != nil {
		return state.ContractRow{}, "", err
	}
	seen := ""
	for _, q := range r.th.det.ModelRequests() {
		if q.At.After(cyc.Requested) && strings.Contains(q.Context+q.NewInput+q.Body, note) {
			seen = fmt.Sprintf("%s request at %s", q.Kind, q.At.Format(time.RFC3339Nano))
			break
		}
	}
	met := res.OK && cyc.State == "done" && seen != "" && next.State == inbox.StateProcessed
	value := fmt.Sprintf("cycle %s: handoff %s materialized; context %d → %d tokens; its procedure note seen in: %s; next message %s",
		orNone(cyc.State), orNone(cyc.Hash), cyc.Before, cyc.After, orNone(seen), next.State)
	if !res.OK {
		value = "the cycle was answered: " + firstLine(res.Error) + "; " + value
	}
	art := fmt.Sprintf("compact answer: %+v\ncycle: %+v\nasked until %s\nnext:\n%s", res, cyc, cycleEnd.Format(time.RFC3339Nano), describe(next, r.turnsFor(after)))
	return state.ContractRow{Met: met, Value: value,
		How: "a procedure note, then the compaction cycle through the command door; met when the cycle is done and the note reaches a model request after it"}, art, nil
}

// resume: the harness process killed, the driver relaunches the same session
// and the next message is processed in it.
func (r *contractRun) resume() (state.ContractRow, string, error) {
	s := r.th.s
	before, err := s.SessionFile().Read()
	if err != nil {
		return state.ContractRow{}, "", err
	}
	// On the app server the recorded pid is the server's pane process
	// (`pantty __exec …/server-launch.toml`), as a pane's is on tmux.
	proc.KillGroup(before.PanePID)
	var now state.Session
	if err := seat.WaitUntil(s, opLimit, func() bool {
		var err error
		now, err = s.SessionFile().Read()
		hb, herr := s.HeartbeatFile().Read()
		return err == nil && herr == nil && now.PanePID != before.PanePID && hb.Phase == state.PhaseIdle
	}); err != nil {
		return state.ContractRow{}, "", fmt.Errorf("no relaunch after the harness was killed: %w", err)
	}
	const after = "contract-after-resume"
	next, err := r.send(after, "pantty contract: the first message after a relaunch")
	if err != nil {
		return state.ContractRow{}, "", err
	}
	met := now.ID == before.ID && next.State == inbox.StateProcessed && len(r.turnsFor(after)) == 1
	process := map[bool]string{true: "app server", false: "pane"}[r.on == config.TransportAppServer]
	value := fmt.Sprintf("session %s → %s (%s pid %d → %d); next message %s", before.ID, now.ID, process, before.PanePID, now.PanePID, next.State)
	art := fmt.Sprintf("before: %+v\nafter: %+v\nnext:\n%s", before, now, describe(next, r.turnsFor(after)))
	return state.ContractRow{Met: met, Value: value,
		How: "the harness's process group killed; met when the driver relaunches the same session id and the next message runs once in it"}, art, nil
}

// liveness: a probe turn proves capability; with the model API refusing the
// key (the failing control), the probe does not pass.
func (r *contractRun) liveness() (state.ContractRow, string, error) {
	s := r.th.s
	began := time.Now()
	ok, err := s.Ask(state.Request{Kind: state.CtlProbe}, opLimit)
	if err != nil {
		return state.ContractRow{}, "", err
	}
	took := time.Since(began)
	art := fmt.Sprintf("probe: %+v (%s)\n", ok, took.Round(time.Millisecond))
	if r.t.Fault == nil {
		return state.ContractRow{Met: ok.OK, Value: fmt.Sprintf("probe turn ok=%v in %s; no dead-provider control: the model cannot be made to fail on this rig", ok.OK, took.Round(time.Millisecond)),
			How: "a probe turn must really run"}, art, nil
	}
	if err := r.t.Fault("auth"); err != nil {
		return state.ContractRow{}, "", err
	}
	defer r.t.Fault("")
	// The probe is held while the seat has no model access, so the detection
	// is the driver's record of the fault (the heartbeat), or a failed probe,
	// whichever comes first.
	answered := make(chan state.Result, 1)
	go func() {
		res, err := s.Ask(state.Request{Kind: state.CtlProbe}, opLimit)
		if err != nil {
			res = state.Result{Error: err.Error()}
		}
		answered <- res
	}()
	began = time.Now()
	var dead state.Result
	probeFailed := false
	var hb state.Heartbeat
	seat.WaitUntil(s, opLimit, func() bool {
		select {
		case dead = <-answered:
			probeFailed = !dead.OK
			return true
		default:
		}
		hb, _ = s.HeartbeatFile().Read()
		return hb.Fault != ""
	})
	detected := time.Since(began)
	art += fmt.Sprintf("with the API answering 401, after %s: probe answered %+v; heartbeat: phase %s fault %s: %s\n",
		detected.Round(time.Millisecond), dead, hb.Phase, hb.Fault, hb.FaultCause)
	met := ok.OK && (hb.Fault != "" || probeFailed)
	value := fmt.Sprintf("probe turn ok=%v in %s; with the API answering 401 the seat recorded fault %q (%s) after %s",
		ok.OK, took.Round(time.Millisecond), orNone(string(hb.Fault)), orNone(firstLine(hb.FaultCause+dead.Error)), detected.Round(time.Millisecond))
	return state.ContractRow{Met: met, Value: value,
		How: "a probe turn must run; the control: with the stand-in answering 401 the probe must fail"}, art, nil
}
