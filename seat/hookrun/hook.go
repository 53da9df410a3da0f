package hookrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// ExitBlock is the exit code of Claude Code's documented hook block: what Run
// answers a PreCompact with when the handoff could not be materialized.
const ExitBlock = 2

// Blocker answers the harness when pantty blocks a compaction it could not
// precede with a materialized handoff: it writes what the harness needs on
// stdout and returns the hook's exit code. message is the line pantty also
// writes on stderr ("pantty: compaction blocked: …").
type Blocker func(message string, stdout io.Writer) int

// BlockByExit is Claude Code's block, Run's: exit ExitBlock, nothing on
// stdout (the reason is on stderr).
func BlockByExit(string, io.Writer) int { return ExitBlock }

// Run is `pantty hook`: the harness (or tmux) runs it for every event. It
// records the event as one atomically written file and returns fast. It never
// fails the harness's action because of pantty trouble (exit 0, complaint on
// stderr) — with one deliberate exception: PreCompact exits 2 (ExitBlock),
// blocking the compaction, when the handoff could not be materialized. It
// prints nothing on UserPromptSubmit, whose output would enter the model's
// context; on SessionStart after a compaction it prints the handoff, which the
// harness injects into the fresh context.
func Run(home, name string, statusLine bool, tmuxEvent string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(home, name, statusLine, tmuxEvent, BlockByExit, stdin, stdout, stderr)
}

// RunBlocker is Run for a harness adapter's translated hook payload (no
// status line, no tmux event) whose harness is told of a blocked compaction
// its own way: block answers it (Codex: exit 0 with {"continue":false}).
func RunBlocker(home, name string, block Blocker, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(home, name, false, "", block, stdin, stdout, stderr)
}

func run(home, name string, statusLine bool, tmuxEvent string, block Blocker, stdin io.Reader, stdout, stderr io.Writer) int {
	// Existing, not Open: a hook for a seat that is not there (removed, or a
	// stale settings file) records nothing and creates no directory for it.
	s, err := state.Existing(home, name)
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		return 0
	}
	payload := hookwire.ReadHookPayload(stdin, stderr)
	now := time.Now()
	if statusLine {
		return statusLineHook(s, payload, now, stdout, stderr)
	}
	kind := tmuxEvent
	switch kind {
	case "pane-died":
		kind = hookwire.EvPaneDied
	case "client-attached":
		kind = hookwire.EvClientAttached
	case "client-detached":
		kind = hookwire.EvClientDetached
	}
	var f hookwire.HookFields
	if kind == "" {
		if json.Unmarshal(payload, &f) == nil && validKind(f.HookEventName) {
			kind = f.HookEventName
		} else {
			kind = "Unknown"
		}
	}
	if kind == "PreToolUse" || kind == "PostToolUse" {
		// Telemetry only: not an event, never evidence, never a failure.
		activityHook(s, kind, payload, now)
		return 0
	}
	code := 0
	note := map[string]string{}
	switch {
	case kind == hookwire.EvPreCompact:
		if msg := preCompact(s, f, now, note); msg != "" {
			fmt.Fprintln(stderr, msg)
			code = block(msg, stdout)
		}
	case kind == hookwire.EvSessionStart && f.Source == "startup":
		// A step's fresh session starts with the handoff (handoff/inject.toml
		// names the session that must get it).
		if in, err := s.InjectFile().Read(); err == nil && in.SessionID == f.SessionID {
			if text, err := s.Handoff().Current(); err == nil {
				fmt.Fprint(stdout, text)
				note["injected_hash"] = handoff.StableHash(text)
			}
		}
	case kind == hookwire.EvSessionStart && f.Source == "compact":
		if text, err := s.Handoff().Current(); err == nil {
			fmt.Fprint(stdout, text)
			note["injected_hash"] = handoff.StableHash(text)
		} else {
			note["inject_error"] = err.Error()
			fmt.Fprintf(stderr, "pantty hook: no handoff to re-inject: %v\n", err)
		}
	}
	if len(note) == 0 {
		note = nil
	}
	if _, err := s.WriteEventNote(kind, payload, note, now); err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
	}
	return code
}

// preCompact makes sure a handoff was materialized before this compaction: a
// cycle pantty requested already did it; any other boundary (the harness's
// auto-compaction, a person's /compact) is materialized here. If that fails it
// returns the block's message, and the caller blocks the compaction: losing
// the procedure detail is worse than a full context. "" lets it go ahead.
func preCompact(s state.Seat, f hookwire.HookFields, now time.Time, note map[string]string) string {
	if c, err := s.CycleFile().Read(); err == nil && c.State == "requested" && now.Sub(c.Requested) < state.CycleFresh {
		note["materialized_by"] = "cycle " + c.ID
		return ""
	}
	n, err := s.BuildNote("pre-compact hook (trigger "+f.Trigger+", not chosen by pantty)", now)
	if err == nil {
		var rec handoff.Record
		rec, err = s.Handoff().Materialize(n)
		if err == nil {
			note["materialized_by"] = "hook"
			note["handoff_hash"] = rec.Hash
			return ""
		}
	}
	note["block"] = err.Error()
	return "pantty: compaction blocked: the handoff could not be materialized: " + err.Error()
}

// statusLineHook keeps the latest status-line payload and, when its usage
// changed, records a StatusLine event for the driver's context reading (the
// status line redraws often; unchanged readings make no event).
func statusLineHook(s state.Seat, payload []byte, now time.Time, stdout, stderr io.Writer) int {
	prev, err := state.ReadRegular(s.StatusLinePath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
	}
	if err := s.WriteRaw(s.StatusLinePath(), payload); err != nil {
		fmt.Fprintf(stderr, "pantty hook: %v\n", err)
	}
	if !bytes.Equal(usageOf(prev), usageOf(payload)) {
		if _, err := s.WriteEvent(hookwire.EvStatusLine, payload, now); err != nil {
			fmt.Fprintf(stderr, "pantty hook: %v\n", err)
		}
	}
	r, err := state.ParseStatusLine(payload)
	if err == nil && r.Window > 0 {
		fmt.Fprintf(stdout, "pantty %s · context %d/%d tokens\n", s.Name, r.Occupancy, r.Window)
	} else {
		fmt.Fprintf(stdout, "pantty %s\n", s.Name)
	}
	return 0
}

// usageOf extracts the part of a status-line payload that a reading depends on.
func usageOf(payload []byte) []byte {
	var p struct {
		SessionID string          `json:"session_id"`
		CW        json.RawMessage `json:"context_window"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return nil
	}
	b, _ := json.Marshal(p)
	return b
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
