package harness

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/seat/state"
)

// MeasureSpec is what `pantty measure` asks of an adapter's Measure.
type MeasureSpec struct {
	// Bin is the harness binary to measure; "" = the adapter's own choice
	// (its environment variable, then its harness cache), else OnPath.
	Bin string
	// OnPath is the harness's command as found on PATH (Capabilities.Binary),
	// "" when it is not there: the harness a user upgraded and runs seats
	// with, which `pantty measure` must find as `seat start` does.
	OnPath string
	// Dir is a scratch directory for the run (the stand-in's request log,
	// the harness's home); the caller removes it.
	Dir string
	// Sigils configures which leading characters a configurable harness (the
	// simulator) dispatches, so a test can show the facts record what was
	// measured rather than a constant; nil = the harness's own.
	Sigils *string
	// Env is added to the throwaway seat's environment: the simulator's
	// knobs (PANTTY_SIM_BROKEN), so a test can show a row fails when the
	// harness lacks what the row measures.
	Env map[string]string
}

// MeasureRig is one harness made measurable: how to make its throwaway seat
// (pointed at the harness's loopback model-API stand-in, started by the
// adapter) and how to observe what reached the model.
type MeasureRig struct {
	Harness string
	Env     map[string]string // seat.toml [env] of the throwaway seat
	// Control is the destructive input that must dispatch raw (default "/clear").
	Control string
	// Command is seat.toml's command for the throwaway seat ("" = the adapter's).
	Command string
	// Setup runs once the throwaway work directory exists, before the seat
	// starts (e.g. pre-seeding a harness HOME that trusts it).
	Setup func(work string) error
	// Detector is made once the throwaway seat exists.
	Detector func(s state.Seat) (Detector, error)
	// Close stops what the rig started (its stand-in); nil when nothing.
	Close func() error
	// Slow returns the text that, put in a message, makes the model's answer
	// to it take d (the stand-in's or the simulator's marker): the contract's
	// cancel row needs a turn that is still running when it cancels.
	Slow func(d time.Duration) string
	// Fault switches the model API to answer every request with the provider
	// fault named ("auth": 401; "" restores it): the liveness row's failing
	// control. nil when the harness's model cannot be made to fail (the
	// simulator is its own model).
	Fault func(kind string) error
}

// Observed is what a Detector saw for one input.
type Observed struct {
	Dispatched   bool
	ReachedModel bool
	Evidence     string // what was seen, for the artifact
}

// Detector tells, exactly, whether an input reached the model and whether it
// dispatched, from the harness side (a request log, the loopback API's log).
type Detector interface {
	// Observe waits up to limit for the outcome of input submitted at since.
	Observe(input string, since time.Time, limit time.Duration) Observed
	// Build is the harness's own version string.
	Build() string
	// ModelRequests is every request that reached the model so far, in order:
	// what "exactly once at the model" is counted on.
	ModelRequests() []StandinRequest
}

// BuildOf runs bin with args (e.g. --version) and returns its trimmed output
// prefixed by prefix, or prefix + " (version unknown)" when it cannot run.
func BuildOf(prefix, bin string, args ...string) string {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return strings.TrimSpace(prefix + " (version unknown)")
	}
	return strings.TrimSpace(prefix + " " + strings.TrimSpace(string(out)))
}

// SideEffects collects, in order and once each, what a detector saw the
// harness do without a model turn.
type SideEffects []string

// Add records s once.
func (s *SideEffects) Add(what string) {
	for _, x := range *s {
		if x == what {
			return
		}
	}
	*s = append(*s, what)
}

// standinTick is how often an observation looks at a stand-in's request log:
// the log is in memory, so no file event announces a new request.
const standinTick = 100 * time.Millisecond

// ObserveUntil is a detector's wait: it calls look at once, on every fsnotify
// event in dirs and every standinTick, until look reports an outcome (done)
// or limit passes. At the limit, any side effect look recorded means the
// input dispatched; none means nothing was seen (evidence: nothing).
func ObserveUntil(dirs []string, limit time.Duration, nothing string, look func(side *SideEffects) (Observed, bool)) Observed {
	w, _ := fsnotify.NewWatcher()
	var events <-chan fsnotify.Event
	if w != nil {
		defer w.Close()
		for _, d := range dirs {
			w.Add(d)
		}
		events = w.Events
	}
	tick := time.NewTicker(standinTick)
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var side SideEffects
	for {
		if o, done := look(&side); done {
			return o
		}
		select {
		case <-tick.C:
		case <-events:
		case <-deadline.C:
			if len(side) > 0 {
				return Observed{Dispatched: true, Evidence: strings.Join(side, "; ")}
			}
			return Observed{Evidence: nothing}
		}
	}
}

// Binary is spec.Bin, or the adapter's own choice (cached: its environment
// variable, then the test suite's harness cache) when spec.Bin is empty, or
// the harness on PATH when neither has one. The variable comes first so the
// test suite measures the version it pinned; a user has neither, and gets
// the harness their seats run.
func (spec MeasureSpec) Binary(cached func() (string, error)) (string, error) {
	if spec.Bin != "" {
		return spec.Bin, nil
	}
	bin, err := cached()
	if err != nil && spec.OnPath != "" {
		return spec.OnPath, nil
	}
	if err != nil {
		return "", fmt.Errorf("%w, and the harness is not on PATH", err)
	}
	return bin, nil
}

// StandinRequest is what a detector reads of one request a loopback stand-in
// logged: when it came, its kind (turn, compact, count_tokens, …), the new
// user input it carried, and where it belongs (a thread id; may be empty).
type StandinRequest struct {
	At       time.Time
	Kind     string
	NewInput string
	Where    string
	// Context is what the client sent with the input besides it (hook
	// output such as a re-injected handoff, system reminders).
	Context string
	// Body is the whole request as sent, when the stand-in keeps bodies:
	// where a text the client put anywhere in the request can be found.
	Body string
}

// StandinRow is what a detector reads of a stand-in's logged row; where
// names the thread or session the request belongs to ("" when its API names
// none).
func StandinRow(r standinkit.Row, where string) StandinRequest {
	return StandinRequest{At: r.At, Kind: r.Kind, NewInput: r.NewInput, Where: where, Context: r.Context, Body: string(r.Body)}
}

// Build is the harness's own version string.
func (w StandinWatch) Build() string { return w.Version }

// ModelRequests is every request the stand-in logged.
func (w StandinWatch) ModelRequests() []StandinRequest { return w.Requests() }

// StandinWatch is a stand-in detector's wait: the input reached the model
// when a turn request after since carried it; a request of a kind in
// sideKinds (kind → what it means) is a harness-side effect, and so is any
// line extra returns (the pane, a hook event). dirs are watched for events.
type StandinWatch struct {
	// Version is the harness's own version string (Build), asked once when
	// the rig made the detector.
	Version   string
	Dirs      []string
	Requests  func() []StandinRequest
	SideKinds map[string]string
	Extra     func(input string, since time.Time) string
}

// Observe waits up to limit for the outcome of input submitted at since.
func (w StandinWatch) Observe(input string, since time.Time, limit time.Duration) Observed {
	want := strings.TrimSpace(input)
	nothing := fmt.Sprintf("no model turn carried %q and no harness-side effect within %s", want, limit)
	return ObserveUntil(w.Dirs, limit, nothing, func(side *SideEffects) (Observed, bool) {
		for _, r := range w.Requests() {
			if r.At.Before(since) {
				continue
			}
			if r.Kind == "turn" && strings.Contains(r.NewInput, want) {
				where := ""
				if r.Where != "" {
					where = " on thread " + r.Where
				}
				return Observed{ReachedModel: true, Evidence: fmt.Sprintf("stand-in: turn request at %s%s carried the input", r.At.Format(time.RFC3339Nano), where)}, true
			}
			if what, ok := w.SideKinds[r.Kind]; ok {
				side.Add(what)
			}
		}
		if w.Extra != nil {
			if line := w.Extra(input, since); line != "" {
				side.Add(line)
			}
		}
		return Observed{}, false
	})
}

// StandinLog is where a rig's stand-in writes its request log: in the run's
// scratch directory.
func (spec MeasureSpec) StandinLog() string { return filepath.Join(spec.Dir, "standin-requests.jsonl") }

// MeasureStandin is what a measure rig needs of its loopback model-API
// stand-in: to stop it and to switch its faults.
type MeasureStandin interface {
	Close() error
	SetFault(standinkit.Fault) error
}

// WithStandin is the rig with its stand-in's stop, slow marker and fault
// switch: every stand-in is driven the same way.
func (r MeasureRig) WithStandin(api MeasureStandin) MeasureRig {
	r.Close, r.Slow = api.Close, standinkit.SlowMarker
	r.Fault = func(kind string) error { return api.SetFault(standinkit.Fault(kind)) }
	return r
}

// StandinRows turns a stand-in's log into the detector's requests; a
// request's session (when its API names one) is where it went.
func StandinRows[R standinkit.Logged](rows func() []R) func() []StandinRequest {
	return func() []StandinRequest {
		var out []StandinRequest
		for _, r := range rows() {
			out = append(out, StandinRow(r.Common(), r.Counts().Session))
		}
		return out
	}
}

// StartRig is the start every stand-in rig shares: the harness binary
// (spec.Binary with the adapter's cache lookup) and its stand-in started
// with the request log where spec keeps it and the bodies kept, for the
// detector to read.
func StartRig[S MeasureStandin](spec MeasureSpec, cached func() (string, error), start func(standinkit.Options) (S, error)) (bin string, api S, err error) {
	if bin, err = spec.Binary(cached); err != nil {
		return "", api, err
	}
	api, err = start(standinkit.Options{LogPath: spec.StandinLog(), KeepBodies: true})
	return bin, api, err
}
