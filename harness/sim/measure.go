package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/state"
)

// Measure makes the simulator measurable. spec.Sigils, when set, configures
// which leading characters the simulator dispatches, so a test can show the
// facts record what was measured rather than a constant.
func (Adapter) Measure(spec harness.MeasureSpec) (harness.MeasureRig, error) {
	env := map[string]string{"PANTTY_SIM_STARTUP": "100ms", "PANTTY_SIM_TURN": "50ms", "PANTTY_SIM_COMMIT": "10ms"}
	for k, v := range spec.Env {
		env[k] = v
	}
	control := ""
	if spec.Sigils != nil {
		env["PANTTY_SIM_SIGILS"] = *spec.Sigils
		if *spec.Sigils != "" {
			control = (*spec.Sigils)[:1] + "clear" // whatever leads, the control must dispatch
		}
	}
	return harness.MeasureRig{Harness: Adapter{}.Name(), Env: env, Control: control, Command: spec.Bin,
		Slow: func(d time.Duration) string { return fmt.Sprintf("[sim:slow=%s]", d) },
		Detector: func(s state.Seat) (harness.Detector, error) {
			return measureDetector{log: filepath.Join(s.HarnessDir(), "requests.jsonl"), dir: s.HarnessDir()}, nil
		}}, nil
}

// measureDetector reads the simulator's request log: what reached the model
// (a turn row) and what was dispatched instead (a command or shell row).
type measureDetector struct{ log, dir string }

// Build is the simulator's version string.
func (measureDetector) Build() string { return "pantty sim (sim-0.1)" }

type loggedRequest struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	NewInput string    `json:"new_input"`
	Injected string    `json:"injected"`
	Session  string    `json:"session_id"`
}

// ModelRequests reads the simulator's whole request log.
func (d measureDetector) ModelRequests() []harness.StandinRequest {
	f, err := os.Open(d.log)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []harness.StandinRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r loggedRequest
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, harness.StandinRequest{At: r.Time, Kind: r.Kind, NewInput: r.NewInput, Where: r.Session, Context: r.Injected})
		}
	}
	return out
}

// Observe waits (on fsnotify events in the simulator's directory) until a row
// for input appears after since, or limit passes.
func (d measureDetector) Observe(input string, since time.Time, limit time.Duration) harness.Observed {
	want := strings.TrimSpace(input)
	return harness.ObserveUntil([]string{d.dir}, limit, fmt.Sprintf("no request-log row for %q within %s", want, limit),
		func(*harness.SideEffects) (harness.Observed, bool) { return d.scan(want, since) })
}

func (d measureDetector) scan(want string, since time.Time) (harness.Observed, bool) {
	for _, r := range d.ModelRequests() {
		if r.At.Before(since.Add(-50 * time.Millisecond)) {
			continue
		}
		row := fmt.Sprintf("request log: %s row at %s, new input %q", r.Kind, r.At.Format(time.RFC3339Nano), r.NewInput)
		switch {
		case (r.Kind == "command" || r.Kind == "shell") && strings.TrimSpace(r.NewInput) == want:
			return harness.Observed{Dispatched: true, Evidence: row}, true
		case r.Kind == "turn" && strings.Contains(r.NewInput, want):
			return harness.Observed{ReachedModel: true, Evidence: row}, true
		}
	}
	return harness.Observed{}, false
}
