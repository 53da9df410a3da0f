package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/claudecode"
	"github.com/pantty/pantty/seat/claudecode/standin"
)

// measureKey is the API key the throwaway claude uses against the stand-in.
const measureKey = "sk-ant-pantty-measure-0000000000000000"

// ClaudeTarget measures the real claude binary against a loopback stand-in for
// the Messages API that it starts itself: no network, no cost, and the detector
// is exact (did the text reach the model; did the side effect happen). Close
// the returned stand-in when the run is over.
func ClaudeTarget(bin, dir string) (Target, *standin.Server, error) {
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(dir, "standin-requests.jsonl")})
	if err != nil {
		return Target{}, nil, err
	}
	home := filepath.Join(dir, "claude-home")
	t := Target{
		Harness: "claude-code",
		Command: bin,
		Env: map[string]string{"HOME": home, "ANTHROPIC_BASE_URL": api.URL(), "ANTHROPIC_API_KEY": measureKey,
			"CLAUDE_CODE_MAX_RETRIES": "0"},
		Setup: func(work string) error {
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			return claudecode.PrepareHome(home, measureKey, work)
		},
		Detector: func(s seat.Seat) (Detector, error) {
			return claudeDetector{api: api, s: s, build: claudeBuild(bin)}, nil
		},
	}
	return t, api, nil
}

func claudeBuild(bin string) string {
	out, err := execOutput(bin, "--version")
	if err != nil {
		return "claude (version unknown)"
	}
	return "claude " + strings.TrimSpace(out)
}

// claudeDetector reads the stand-in's log (what reached the model) and the seat's
// hook events (a SessionStart from /clear), and counts a harness-side request
// that is not a model turn (count_tokens from /context, a compaction) as
// dispatch. Shell side effects are checked by the run itself (files).
type claudeDetector struct {
	api   *standin.Server
	s     seat.Seat
	build string
}

func (d claudeDetector) Build() string { return d.build }

// Observe waits up to limit for the outcome of input submitted at since.
func (d claudeDetector) Observe(input string, since time.Time, limit time.Duration) Observed {
	want := strings.TrimSpace(input)
	w, _ := fsnotify.NewWatcher()
	if w != nil {
		defer w.Close()
		w.Add(d.s.EventsDir())
		w.Add(d.s.SeenDir())
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
				return Observed{ReachedModel: true, Evidence: fmt.Sprintf("stand-in: %s request at %s carried the input", r.Kind, r.At.Format(time.RFC3339Nano))}
			case r.Kind == "count_tokens" || r.Kind == "compact":
				side = appendOnce(side, "stand-in "+r.Kind+" request (the harness acted without a model turn)")
			}
		}
		if d.clearedSince(since) {
			side = appendOnce(side, "SessionStart source=clear (the session was replaced)")
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

func eventsOf(w *fsnotify.Watcher) <-chan fsnotify.Event {
	if w == nil {
		return nil
	}
	return w.Events
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// clearedSince reports a SessionStart with source clear recorded after since.
func (d claudeDetector) clearedSince(since time.Time) bool {
	for _, dir := range []string{d.s.EventsDir(), d.s.SeenDir()} {
		names, _ := filepath.Glob(filepath.Join(dir, "*-SessionStart.json"))
		for _, n := range names {
			if t, ok := seat.EventTime(filepath.Base(n)); ok && t.After(since) {
				if ev, err := seat.ReadEvent(n); err == nil && ev.Fields.Source == "clear" {
					return true
				}
			}
		}
	}
	return false
}
