package measure

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat"
)

// SimTarget measures the simulator. sigils, when set, configures which leading
// characters the simulator dispatches, so a test can show the facts record what
// was measured rather than a constant.
func SimTarget(sigils *string) Target {
	env := map[string]string{"PANTTY_SIM_STARTUP": "100ms", "PANTTY_SIM_TURN": "50ms", "PANTTY_SIM_COMMIT": "10ms"}
	control := ""
	if sigils != nil {
		env["PANTTY_SIM_SIGILS"] = *sigils
		if *sigils != "" {
			control = (*sigils)[:1] + "clear" // whatever leads, the control must dispatch
		}
	}
	return Target{Harness: "sim", Env: env, Control: control, Detector: func(s seat.Seat) (Detector, error) {
		return simDetector{log: filepath.Join(s.HarnessDir(), "requests.jsonl"), dir: s.HarnessDir()}, nil
	}}
}

// simDetector reads the simulator's request log: what reached the model (a turn
// row) and what was dispatched instead (a command or shell row).
type simDetector struct{ log, dir string }

func (simDetector) Build() string { return "pantty sim (sim-0.1)" }

type simRow struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	NewInput string    `json:"new_input"`
}

// Observe waits (on fsnotify events in the simulator's directory) until a row
// for input appears after since, or limit passes.
func (d simDetector) Observe(input string, since time.Time, limit time.Duration) Observed {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		defer w.Close()
		w.Add(d.dir)
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	want := strings.TrimSpace(input)
	for {
		if o, ok := d.scan(want, since); ok {
			return o
		}
		if w == nil {
			return Observed{Evidence: "no watcher"}
		}
		select {
		case <-w.Events:
		case <-deadline.C:
			return Observed{Evidence: fmt.Sprintf("no request-log row for %q within %s", want, limit)}
		}
	}
}

func (d simDetector) scan(want string, since time.Time) (Observed, bool) {
	f, err := os.Open(d.log)
	if err != nil {
		return Observed{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r simRow
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Time.Before(since.Add(-50*time.Millisecond)) {
			continue
		}
		got := strings.TrimSpace(r.NewInput)
		switch {
		case (r.Kind == "command" || r.Kind == "shell") && got == want:
			return Observed{Dispatched: true, Evidence: "request log: " + sc.Text()}, true
		case r.Kind == "turn" && strings.Contains(r.NewInput, want):
			return Observed{ReachedModel: true, Evidence: "request log: " + sc.Text()}, true
		}
	}
	return Observed{}, false
}
