package gemini

import (
	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/gemini/standin"
	"github.com/pantty/pantty/seat/state"
)

// MeasureControl is the destructive control for Gemini CLI: /compress
// replaces the history with a summary, and the stand-in sees its summary
// requests, so the instrument can tell that it dispatched.
const MeasureControl = "/compress"

// Measure makes the real gemini binary measurable on pantty's tmux path
// against a loopback Gemini API stand-in that it starts itself: no network,
// no cost. The throwaway seat's environment points the CLI at it
// (GOOGLE_GEMINI_BASE_URL, any GEMINI_API_KEY). The rig's Close stops it.
func (Adapter) Measure(spec harness.MeasureSpec) (harness.MeasureRig, error) {
	bin, api, err := harness.StartRig(spec, CachedBinary, standin.Start)
	if err != nil {
		return harness.MeasureRig{}, err
	}
	return harness.MeasureRig{
		Harness: Adapter{}.Name(),
		Command: bin,
		Control: MeasureControl,
		Env:     map[string]string{"GEMINI_API_KEY": "pantty-measure", "GOOGLE_GEMINI_BASE_URL": api.URL()},
		// The detector reads the stand-in's log: a turn request that carried
		// the input reached the model; summary requests are a compression
		// that ran without a model turn.
		Detector: func(s state.Seat) (harness.Detector, error) {
			return harness.StandinWatch{Version: harness.BuildOf("gemini-cli", bin, "--version"), // "gemini-cli 0.61.0"
				Dirs:      []string{s.EventsDir()},
				Requests:  harness.StandinRows(api.Requests),
				SideKinds: map[string]string{"compress": "stand-in compress request (the harness compressed without a model turn)"},
			}, nil
		},
	}.WithStandin(api), nil
}
