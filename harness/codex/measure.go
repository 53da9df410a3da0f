package codex

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// measureKeyEnv names the (any) key the throwaway codex sends to the stand-in.
const measureKeyEnv = "PANTTY_MEASURE_KEY"

// MeasureControl is the destructive control for Codex: /compact replaces the
// thread's history with a summary, and the stand-in sees its summarisation
// request, so the instrument can tell that it dispatched.
const MeasureControl = "/compact"

// Measure makes the real codex binary measurable on pantty's tmux path against
// a loopback Responses-API stand-in that it starts itself: no network, no
// cost. The throwaway seat's CODEX_HOME (under spec.Dir) names the stand-in
// as its model provider. The rig's Close stops the stand-in.
func (Adapter) Measure(spec harness.MeasureSpec) (harness.MeasureRig, error) {
	bin, api, err := harness.StartRig(spec, CachedBinary, standin.Start)
	if err != nil {
		return harness.MeasureRig{}, err
	}
	home := filepath.Join(spec.Dir, "codex-home")
	return harness.MeasureRig{
		Harness: Adapter{}.Name(),
		Command: bin,
		Control: MeasureControl,
		Env:     map[string]string{"CODEX_HOME": home, measureKeyEnv: "pantty-measure"},
		Setup: func(string) error {
			return WriteProvider(home, "standin", api.URL()+"/v1", measureKeyEnv, "gpt-5.1-codex")
		},
		// The detector reads the stand-in's log (a turn request that carried the
		// input reached the model; a summarisation request is a compaction that
		// ran without a model turn) and the pane (Codex's command parser
		// answering an unknown slash command, "Unrecognized command", took the
		// text before the model). Shell side effects are checked by the run
		// itself (files).
		Detector: func(s state.Seat) (harness.Detector, error) {
			return harness.StandinWatch{Version: harness.BuildOf("", bin, "--version"), // "codex-cli 0.171.0"
				Dirs:      []string{s.EventsDir()},
				Requests:  harness.StandinRows(api.Requests),
				SideKinds: map[string]string{"compact": "stand-in compact request (the harness compacted without a model turn)"},
				Extra: func(input string, _ time.Time) string {
					if line := unrecognized(s, input); line != "" {
						return "the pane: " + line + " (the TUI's command parser took the text)"
					}
					return ""
				},
			}, nil
		},
	}.WithStandin(api), nil
}

// unrecognized returns the pane's "Unrecognized command '/x'" line when it is
// the answer to this input: the command the input starts with (after leading
// newlines, which Codex skips), the box still holding the text (an unknown
// command is not submitted), and that line the last thing above the box (so a
// line left by an earlier input does not count). "" otherwise.
func unrecognized(s state.Seat, input string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(input, "\n"), " ")
	name, _, _ = strings.Cut(name, "\n")
	if !strings.HasPrefix(name, "/") {
		return ""
	}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	screen, err := tmux.New(sess.Socket).Capture(ctx, sess.PaneID)
	if err != nil {
		return ""
	}
	if box, ok := (Adapter{}).Composer(screen); !ok || !strings.Contains(box, name) {
		return ""
	}
	_, _, status, _ := Status(screen)
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
