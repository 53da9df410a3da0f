package measure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// Options steer one measurement run.
type Options struct {
	Pantty   string        // the pantty binary the throwaway seat's driver and hooks run
	Now      time.Time     // the measurement's date (injected clock)
	Revisit  time.Duration // asOf + Revisit: past it the facts are flagged
	Fail     time.Duration // asOf + Fail: past it a gate fails without a re-measurement
	Progress func(string)
	Wait     time.Duration // how long to wait for each input's outcome (default 4s)
	// PanttyVersion is recorded with a contract run (pantty --version).
	PanttyVersion string
	// Transport is the seat.toml transport a contract run's seat runs on
	// ("" is tmux; app-server for a harness that has one). The dispatch
	// measurement is the tmux path's (its raw door pastes into the pane).
	Transport string
}

// Run measures target's dispatch predicate and writes the facts file under home
// (home/facts/<harness>-resident.toml, artifacts beside it). The throwaway seat
// lives in its own temporary PANTTY_HOME on its own tmux socket and is removed.
func Run(home string, t harness.MeasureRig, o Options) (state.FactsFile, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Wait == 0 {
		o.Wait = 4 * time.Second
	}
	say := func(f string, a ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(f, a...))
		}
	}
	th, err := startThrowaway(t, o, config.TransportTmux)
	if err != nil {
		return state.FactsFile{}, err
	}
	defer th.close()
	s, token, det, work := th.s, th.token, th.det, th.work
	stamp := o.Now.UTC().Format("20060102T150405")
	artDir := filepath.Join(home, "facts", "artifacts", t.Harness+"-resident-"+stamp)
	if err := os.MkdirAll(artDir, fsatomic.DirMode); err != nil {
		return state.FactsFile{}, err
	}
	items := Corpus(work, t.Control)
	var obs []state.Observation

	// The board door: the exact path of every board message (driver, guard,
	// bracketed paste, evidence).
	for _, it := range items {
		say("board door: %s", it.Name)
		o1 := state.Observation{Name: it.Name, Input: it.Input, Door: "board"}
		since := time.Now()
		res, err := s.Enqueue(guard.Message{ID: "board-" + it.Name, Text: it.Input}, 0, since)
		var ev string
		switch {
		case errors.Is(err, state.ErrBadInput):
			o1.Refused = err.Error()
		case err != nil:
			return state.FactsFile{}, err
		default:
			if err := seat.WaitFinal(s, []string{res.ID}, 30*time.Second); err != nil {
				return state.FactsFile{}, err
			}
			seen := det.Observe(it.Input, since, o.Wait)
			o1.Dispatched, o1.ReachedModel, ev = seen.Dispatched, seen.ReachedModel, seen.Evidence
			o1.SideEffect = exists(it.Effect)
			os.Remove(it.Effect)
		}
		o1.Artifact = writeArtifact(artDir, o1, ev)
		obs = append(obs, o1)
	}

	// The raw door: the same paste path without the guard, on this seat only.
	if _, err := s.Ask(state.Request{Kind: state.CtlRelease}, 20*time.Second); err != nil {
		return state.FactsFile{}, err
	}
	if !seat.WaitFree(s, 10*time.Second) {
		return state.FactsFile{}, fmt.Errorf("measure: the throwaway driver did not release its seat")
	}
	lock, err := seat.Acquire(s)
	if err != nil {
		return state.FactsFile{}, err
	}
	defer lock.Release()
	paster, err := NewRawPaster(s, token)
	if err != nil {
		return state.FactsFile{}, err
	}
	controlOK := false
	for _, it := range items {
		say("raw control path: %s", it.Name)
		o1 := state.Observation{Name: it.Name, Input: it.Input, Door: "raw"}
		since := time.Now()
		if err := paster.Submit(it.Input); err != nil {
			return state.FactsFile{}, err
		}
		seen := det.Observe(it.Input, since, o.Wait)
		o1.Dispatched, o1.ReachedModel = seen.Dispatched, seen.ReachedModel
		o1.SideEffect = exists(it.Effect)
		o1.Dispatched = o1.Dispatched || o1.SideEffect
		if it.Control {
			controlOK = o1.Dispatched
		}
		o1.Artifact = writeArtifact(artDir, o1, seen.Evidence)
		obs = append(obs, o1)
	}
	form, sigils := classify(obs, items)
	f := state.FactsFile{Harness: t.Harness, Build: det.Build(), Shape: config.ShapeResident,
		Path: pathWords(config.TransportTmux),
		Form: form, Sigils: sigils, AsOf: o.Now.UTC(), Revisit: o.Now.Add(o.Revisit).UTC(), FailAfter: o.Now.Add(o.Fail).UTC(),
		ControlOK: controlOK, Artifacts: artDir, Observations: obs}
	sort.SliceStable(f.Observations, func(i, j int) bool { return f.Observations[i].Door < f.Observations[j].Door })
	if !controlOK {
		return f, fmt.Errorf("measure: the control (raw %q) did not dispatch: the instrument cannot tell safe from broken; no facts written", items[len(items)-1].Input)
	}
	if err := state.LocalFactsFile(home, t.Harness, config.ShapeResident).Write(f); err != nil {
		return f, err
	}
	return f, nil
}

// throwaway is a started measurement seat in its own temporary PANTTY_HOME on
// its own tmux socket.
type throwaway struct {
	s      state.Seat
	token  string
	det    harness.Detector
	work   string
	tmp    string
	socket string
}

// startThrowaway makes, prepares and starts the throwaway seat for t, on
// transport.
func startThrowaway(t harness.MeasureRig, o Options, transport string) (*throwaway, error) {
	tmp, err := os.MkdirTemp("", "pm-")
	if err != nil {
		return nil, err
	}
	th := &throwaway{tmp: tmp, work: filepath.Join(tmp, "work"), socket: filepath.Join(tmp, "tmux")}
	fail := func(err error) (*throwaway, error) {
		th.close()
		return nil, err
	}
	if err := os.MkdirAll(th.work, 0o700); err != nil {
		return fail(err)
	}
	os.WriteFile(filepath.Join(th.work, "notes.txt"), []byte("measure: mention target\n"), 0o600)
	if t.Setup != nil {
		if err := t.Setup(th.work); err != nil {
			return fail(fmt.Errorf("measure: prepare %s: %w", t.Harness, err))
		}
	}
	if th.s, th.token, err = throwawaySeat(filepath.Join(tmp, "home"), t, th.work, th.socket, transport); err != nil {
		return fail(err)
	}
	if o.Progress != nil {
		o.Progress("starting a throwaway " + t.Harness + " seat on the " + transport + " path")
	}
	if _, err := seat.Start(th.s, seat.StartOptions{Pantty: o.Pantty}); err != nil {
		return fail(fmt.Errorf("measure: start the throwaway seat: %w", err))
	}
	if th.det, err = t.Detector(th.s); err != nil {
		return fail(err)
	}
	return th, nil
}

// close stops the throwaway seat's harness and tmux server and removes it.
func (th *throwaway) close() {
	if th.s.Dir != "" {
		if _, live, _ := th.s.LiveOwner(); live {
			th.s.Ask(state.Request{Kind: state.CtlStop}, 20*time.Second)
		}
		if sess, err := th.s.SessionFile().Read(); err == nil {
			proc.KillGroup(sess.PanePID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tmux.New(th.socket).KillServer(ctx)
	os.RemoveAll(th.tmp)
}

// throwawaySeat writes the measurement's own seat on transport, marked so
// that only this run's raw paster accepts it.
func throwawaySeat(home string, t harness.MeasureRig, work, socket, transport string) (state.Seat, string, error) {
	s, err := state.Open(home, "measure")
	if err != nil {
		return s, "", err
	}
	if err := s.Ensure(); err != nil {
		return s, "", err
	}
	var b strings.Builder
	// Delivery keeps pantty's defaults (submit_timeout, submit_retries): the
	// measurement is of the path a seat runs. With 3 s and one retry, the
	// battery's first message on a fresh Claude Code seat was failed
	// undelivered under CI's load (2026-12-04) where a default seat waits.
	fmt.Fprintf(&b, "name = \"measure\"\nharness = %q\nworkdir = %q\ntransport = %q\n", t.Harness, work, transport)
	if t.Command != "" {
		fmt.Fprintf(&b, "command = %q\n", t.Command)
	}
	// A compaction that does not complete fails in 30 s rather than the
	// default 5 minutes: a harness that never re-injects is a measured fact,
	// not a hung measurement.
	fmt.Fprintf(&b, "\n[compaction]\ntimeout = \"30s\"\n\n[tmux]\nsocket = %q\n\n[env]\n", socket)
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %q\n", k, t.Env[k])
	}
	if err := fsatomic.WriteFile(s.TmpDir(), s.ConfigPath(), []byte(b.String())); err != nil {
		return s, "", err
	}
	if _, err := s.LoadConfig(); err != nil {
		return s, "", err
	}
	tok := make([]byte, 8)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	return s, token, state.MeasureMarkerFile(s).Write(state.MeasureMarker{Token: token})
}

func tmuxVersion() string {
	out, err := execOutput("tmux", "-V")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.TrimPrefix(out, "tmux "))
}
