package claudecode

import (
	"os"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode/standin"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// measureKey is the API key the throwaway claude uses against the stand-in.
const measureKey = "sk-ant-pantty-measure-0000000000000000"

// Measure makes the real claude binary measurable against a loopback stand-in
// for the Messages API that it starts itself: no network, no cost, and the
// detector is exact (did the text reach the model; did the side effect
// happen). The rig's Close stops the stand-in.
func (Adapter) Measure(spec harness.MeasureSpec) (harness.MeasureRig, error) {
	bin, api, err := harness.StartRig(spec, CachedBinary, standin.Start)
	if err != nil {
		return harness.MeasureRig{}, err
	}
	home := filepath.Join(spec.Dir, "claude-home")
	return harness.MeasureRig{
		Harness: Adapter{}.Name(),
		Command: bin,
		Env: map[string]string{"HOME": home, "ANTHROPIC_BASE_URL": api.URL(), "ANTHROPIC_API_KEY": measureKey,
			"CLAUDE_CODE_MAX_RETRIES": "0"},
		Setup: func(work string) error {
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			return PrepareHome(home, measureKey, work)
		},
		// The detector reads the stand-in's log (what reached the model) and the
		// seat's hook events (a SessionStart from /clear), and counts a
		// harness-side request that is not a model turn (count_tokens from
		// /context, a compaction) as dispatch. Shell side effects are checked by
		// the run itself (files).
		Detector: func(s state.Seat) (harness.Detector, error) {
			return harness.StandinWatch{Version: harness.BuildOf("claude", bin, "--version"),
				Dirs:     []string{s.EventsDir(), s.SeenDir()},
				Requests: harness.StandinRows(api.Requests),
				SideKinds: map[string]string{
					"count_tokens": "stand-in count_tokens request (the harness acted without a model turn)",
					"compact":      "stand-in compact request (the harness acted without a model turn)",
				},
				Extra: func(_ string, since time.Time) string {
					if clearedSince(s, since) {
						return "SessionStart source=clear (the session was replaced)"
					}
					return ""
				},
			}, nil
		},
	}.WithStandin(api), nil
}

// clearedSince reports a SessionStart with source clear recorded after since.
func clearedSince(s state.Seat, since time.Time) bool {
	for _, dir := range []string{s.EventsDir(), s.SeenDir()} {
		names, _ := filepath.Glob(filepath.Join(dir, "*-SessionStart.json"))
		for _, n := range names {
			if t, ok := state.EventTime(filepath.Base(n)); ok && t.After(since) {
				if ev, err := hookwire.ReadEvent(n); err == nil && ev.Fields.Source == "clear" {
					return true
				}
			}
		}
	}
	return false
}
