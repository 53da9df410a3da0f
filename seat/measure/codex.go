package measure

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/codex"
	"github.com/pantty/pantty/seat/codex/standin"
	"github.com/pantty/pantty/tmux"
)

// codexKeyEnv names the (any) key the throwaway codex sends to the stand-in.
const codexKeyEnv = "PANTTY_MEASURE_KEY"

// CodexControl is the destructive control for Codex: /compact replaces the
// thread's history with a summary, and the stand-in sees its summarisation
// request, so the instrument can tell that it dispatched.
const CodexControl = "/compact"

// CodexTarget measures the real codex binary on pantty's tmux path against a
// loopback Responses-API stand-in that it starts itself: no network, no cost.
// The throwaway seat's CODEX_HOME (under dir) names the stand-in as its model
// provider. Close the returned stand-in when the run is over.
func CodexTarget(bin, dir string) (Target, *standin.Server, error) {
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "standin-requests.jsonl")})
	if err != nil {
		return Target{}, nil, err
	}
	home := filepath.Join(dir, "codex-home")
	t := Target{
		Harness: "codex",
		Command: bin,
		Control: CodexControl,
		Env:     map[string]string{"CODEX_HOME": home, codexKeyEnv: "pantty-measure"},
		Setup: func(string) error {
			return codex.WriteProvider(home, "standin", api.URL()+"/v1", codexKeyEnv, "gpt-5.1-codex")
		},
		Detector: func(s seat.Seat) (Detector, error) {
			return codexDetector{api: api, s: s, build: codexBuild(bin)}, nil
		},
	}
	return t, api, nil
}

func codexBuild(bin string) string {
	out, err := execOutput(bin, "--version")
	if err != nil {
		return "codex (version unknown)"
	}
	return strings.TrimSpace(out) // "codex-cli 0.171.0"
}

// codexDetector reads the stand-in's log (a turn request that carried the input
// reached the model; a summarisation request is a compaction that ran without a
// model turn) and the pane (Codex's command parser answering an unknown slash
// command, "Unrecognized command", took the text before the model). Shell side
// effects are checked by the run itself (files).
type codexDetector struct {
	api   *standin.Server
	s     seat.Seat
	build string
}

func (d codexDetector) Build() string { return d.build }

// Observe waits up to limit for the outcome of input submitted at since.
func (d codexDetector) Observe(input string, since time.Time, limit time.Duration) Observed {
	want := strings.TrimSpace(input)
	w, _ := fsnotify.NewWatcher()
	if w != nil {
		defer w.Close()
		w.Add(d.s.EventsDir())
	}
	tick := time.NewTicker(100 * time.Millisecond) // the stand-in's log is in memory: no file event for it
	defer tick.Stop()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	var side []string
	for {
		for _, r := range d.api.Requests() {
			if r.At.Before(since) {
				continue
			}
			switch {
			case r.Kind == "turn" && strings.Contains(r.NewInput, want):
				return Observed{ReachedModel: true, Evidence: fmt.Sprintf("stand-in: turn request at %s on thread %s carried the input",
					r.At.Format(time.RFC3339Nano), r.Thread)}
			case r.Kind == "compact":
				side = appendOnce(side, "stand-in compact request (the harness compacted without a model turn)")
			}
		}
		if line := d.unrecognized(input); line != "" {
			side = appendOnce(side, "the pane: "+line+" (the TUI's command parser took the text)")
		}
		select {
		case <-tick.C:
		case <-eventsOf(w):
		case <-deadline.C:
			if len(side) > 0 {
				return Observed{Dispatched: true, Evidence: strings.Join(side, "; ")}
			}
			return Observed{Evidence: fmt.Sprintf("no model turn carried %q and no harness-side effect within %s", want, limit)}
		}
	}
}

// unrecognized returns the pane's "Unrecognized command '/x'" line when it is
// the answer to this input: the command the input starts with (after leading
// newlines, which Codex skips), the box still holding the text (an unknown
// command is not submitted), and that line the last thing above the box (so a
// line left by an earlier input does not count). "" otherwise.
func (d codexDetector) unrecognized(input string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(input, "\n"), " ")
	name, _, _ = strings.Cut(name, "\n")
	if !strings.HasPrefix(name, "/") {
		return ""
	}
	sess, err := d.s.ReadSession()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	screen, err := tmux.New(sess.Socket).Capture(ctx, sess.PaneID)
	if err != nil {
		return ""
	}
	if box, ok := (codex.Adapter{}).Composer(screen); !ok || !strings.Contains(box, name) {
		return ""
	}
	_, _, status, _ := codex.Status(screen)
	lines := strings.Split(screen, "\n")
	i := status - 1
	for i >= 0 && !strings.HasPrefix(lines[i], "›") {
		i--
	}
	for i--; i >= 0 && strings.TrimSpace(lines[i]) == ""; i-- {
	}
	if i >= 0 && strings.Contains(lines[i], "Unrecognized command '"+name+"'") {
		// The unknown command stays in the box (cursor not at its end): empty it,
		// line by line, so the next input of this throwaway seat starts clean.
		for k := 0; k < 3; k++ {
			tmux.New(sess.Socket).SendKeys(ctx, sess.PaneID, "End", "C-u", "BSpace")
		}
		return strings.TrimSpace(lines[i])
	}
	return ""
}
