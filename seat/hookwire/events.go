package hookwire

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// Hook event kinds pantty acts on (Claude Code's names, which the simulator shares).
const (
	EvSessionStart     = "SessionStart"
	EvUserPromptSubmit = "UserPromptSubmit"
	EvStop             = "Stop"
	EvStopFailure      = "StopFailure"
	EvPreCompact       = "PreCompact"
	EvPostCompact      = "PostCompact"
	EvSessionEnd       = "SessionEnd"
	EvNotification     = "Notification"
	EvPaneDied         = "PaneDied"   // from tmux's pane-died hook, not from the harness
	EvStatusLine       = "StatusLine" // a status-line payload whose usage changed
	EvClientAttached   = "ClientAttached"
	EvClientDetached   = "ClientDetached"
	EvContextReading   = "ContextReading" // an adapter's occupancy reading (ContextReadingPayload)
	// EvRequestFailed is a failed model request inside a turn the harness keeps
	// running (StopFailure's fields; an adapter's translation, e.g. Codex's
	// PostModelRequest on a lost connection): not a turn end.
	EvRequestFailed = "RequestFailed"
	// EvRetryWentThrough is a request the harness had been retrying inside
	// the turn that went through (an adapter's translation, e.g. Gemini's
	// AfterTool after a step's retries): the wait RequestFailed published is
	// over while the turn goes on.
	EvRetryWentThrough = "RetryWentThrough"
)

// Event is one hook event as `pantty hook` recorded it in events/. The payload is
// kept whole; the fields pantty binds evidence on are decoded beside it.
type Event struct {
	File       string          `json:"-"` // file name in events/ (or events/seen/)
	Kind       string          `json:"event"`
	ReceivedAt time.Time       `json:"received_at"`
	Payload    json.RawMessage `json:"payload"`
	// Pantty holds what `pantty hook` itself did for this event (e.g. the hash
	// of the handoff it injected on SessionStart after a compaction).
	Pantty map[string]string `json:"pantty,omitempty"`
	Fields HookFields        `json:"-"`
}

// HookFields are the payload fields pantty reads (docs/claude-code.md, "Hooks").
type HookFields struct {
	HookEventName        string `json:"hook_event_name"`
	SessionID            string `json:"session_id"`
	TranscriptPath       string `json:"transcript_path"`
	Cwd                  string `json:"cwd"`
	Source               string `json:"source"`
	PromptID             string `json:"prompt_id"`
	Prompt               string `json:"prompt"`
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`
	Error                string `json:"error"`
	Trigger              string `json:"trigger"`
	CustomInstructions   string `json:"custom_instructions"`
	CompactSummary       string `json:"compact_summary"`
	Reason               string `json:"reason"`
	Model                any    `json:"model"`
	NotificationType     string `json:"notification_type"`
	Message              string `json:"message"`
}

// NotePermissionRequest is the notification_type of a Notification an
// adapter translates from a harness's permission-request hook (Codex's
// PermissionRequest): the harness asks a person before a tool runs.
const NotePermissionRequest = "permission_request"

// MaxHookPayload bounds what `pantty hook` reads from stdin.
const MaxHookPayload = 4 << 20

// ReadHookPayload reads a hook's payload from stdin, at most MaxHookPayload.
// A read error is reported on stderr and what was read is used: a hook never
// fails the harness's action because of pantty trouble.
func ReadHookPayload(stdin io.Reader, stderr io.Writer) []byte {
	payload, err := io.ReadAll(io.LimitReader(stdin, MaxHookPayload))
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: read payload: %v\n", err)
	}
	return payload
}

// ReadEvent reads and decodes one event file.
func ReadEvent(path string) (Event, error) {
	var ev Event
	data, err := state.ReadRegular(path)
	if err != nil {
		return ev, err
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return ev, fmt.Errorf("%s: %v", path, err)
	}
	ev.File = filepath.Base(path)
	if len(ev.Payload) > 0 && ev.Payload[0] == '{' {
		if err := json.Unmarshal(ev.Payload, &ev.Fields); err != nil {
			return ev, fmt.Errorf("%s: payload: %v", path, err)
		}
	}
	return ev, nil
}
