package seat

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// RunHook is `pantty hook`: the harness (or tmux) runs it for every event. It
// records the event as one atomically written file and returns fast. It never
// fails the harness's action because of pantty trouble (exit 0, complaint on
// stderr), and prints nothing on UserPromptSubmit, whose output would enter the
// model's context.
func RunHook(home, name string, statusLine bool, tmuxEvent string, stdin io.Reader, stdout, stderr io.Writer) int {
	s, err := Open(home, name)
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		return 0
	}
	payload, err := io.ReadAll(io.LimitReader(stdin, MaxHookPayload))
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: read payload: %v\n", err)
	}
	now := time.Now()
	if statusLine {
		// The status line fires on every redraw: keep only the latest reading.
		if err := s.WriteRaw(s.StatusLinePath(), payload); err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		}
		fmt.Fprintf(stdout, "pantty seat %s\n", name)
		return 0
	}
	kind := tmuxEvent
	if kind == "pane-died" {
		kind = EvPaneDied
	}
	if kind == "" {
		var f HookFields
		if json.Unmarshal(payload, &f) == nil && validKind(f.HookEventName) {
			kind = f.HookEventName
		} else {
			kind = "Unknown"
		}
	}
	if _, err := s.WriteEvent(kind, payload, now); err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
	}
	return 0
}

// validKind keeps event names safe to use in a file name.
func validKind(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
