package hookrun

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// activityHook records one tool call. It can never fail the action it
// observes: every error is swallowed (exit 0), nothing is printed, and it does
// only a small bounded amount of work.
func activityHook(s state.Seat, kind string, payload []byte, now time.Time) {
	var p struct {
		Tool  string         `json:"tool_name"`
		Input map[string]any `json:"tool_input"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Tool == "" {
		return
	}
	a := state.Activity{Tool: state.Truncate(p.Tool, 40), Phase: "pre", At: now.UTC()}
	if kind == "PostToolUse" {
		a.Phase = "post"
	}
	switch {
	case p.Input["command"] != nil:
		a.What = state.Cut(state.Redact(fmt.Sprint(p.Input["command"])), 80)
	case p.Input["file_path"] != nil:
		a.What = filepath.Base(fmt.Sprint(p.Input["file_path"]))
	case p.Input["pattern"] != nil:
		a.What = state.Cut(state.Redact(fmt.Sprint(p.Input["pattern"])), 80)
	}
	_ = s.ActivityFile().Write(a)
}
