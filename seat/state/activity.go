package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/statedir"
)

// Activity is activity.toml: what the seat is doing now, from its own tool
// calls (PreToolUse/PostToolUse hooks, off by default), latest wins. It is
// telemetry only: never part of the intake path, never turn evidence.
type Activity struct {
	Tool  string    `toml:"tool"`
	What  string    `toml:"what"`  // redacted before it was cut to length
	Phase string    `toml:"phase"` // pre (running), post (finished)
	At    time.Time `toml:"at"`
}

// ActivityPath is activity.toml: the last tool call the seat's hooks recorded.
func (s Seat) ActivityPath() string { return s.path("activity.toml") }

// ActivityQuiet is how long after its last event an activity is still shown.
const ActivityQuiet = 30 * time.Second

// Cut shortens s to at most n runes on a rune boundary.
func Cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

var (
	// A credential-named key followed by its value: API_KEY=x, token: x, --password x.
	secretKV = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:token|api[_-]?key|secret|password|passwd|credential)[A-Za-z0-9_-]*["']?)(\s*[=:]\s*|\s+)("[^"]*"|'[^']*'|[^\s"']+)`)
	})
	bearer = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(bearer)\s+[^\s"']+`) })
	// A long opaque string (keys, tokens): letters and digits mixed, 24+ chars.
	opaque = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9_\-+/=]{24,}`) })
)

// Redact masks credentials in text pantty stores from a seat (activity, pane
// text in artifacts and errors): values after token / api_key / secret /
// password / Bearer, and long opaque strings. It runs before any cutting to
// length, so a cut can never leave half a secret behind.
func Redact(s string) string {
	s = secretKV().ReplaceAllString(s, "$1$2[REDACTED]")
	s = bearer().ReplaceAllString(s, "$1 [REDACTED]")
	return opaque().ReplaceAllStringFunc(s, func(m string) string {
		if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(strings.ToLower(m), "abcdefghijklmnopqrstuvwxyz") {
			return "[REDACTED]"
		}
		return m
	})
}

// StatusReading is the occupancy a status-line payload reports. Only
// context_window.current_usage is read: total_input_tokens and cost.* are
// cumulative over the session, never occupancy, and would rise across a
// successful compaction.
type StatusReading struct {
	SessionID     string
	Input         int // input_tokens: what this request added, uncached
	CacheCreation int
	CacheRead     int
	Occupancy     int // Input + CacheCreation + CacheRead
	Window        int // context_window_size
	Model         string
}

// ErrNoUsage: the payload carries no usage yet (before the first request, after /clear).
var ErrNoUsage = errors.New("status line carries no usage")

// ParseStatusLine reads a Claude Code-shaped status-line payload.
func ParseStatusLine(payload []byte) (StatusReading, error) {
	var p struct {
		SessionID string `json:"session_id"`
		Model     struct {
			ID string `json:"id"`
		} `json:"model"`
		CW struct {
			Size  int `json:"context_window_size"`
			Usage *struct {
				Input         int `json:"input_tokens"`
				CacheCreation int `json:"cache_creation_input_tokens"`
				CacheRead     int `json:"cache_read_input_tokens"`
			} `json:"current_usage"`
		} `json:"context_window"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return StatusReading{}, fmt.Errorf("status line: %v", err)
	}
	r := StatusReading{SessionID: p.SessionID, Window: p.CW.Size, Model: p.Model.ID}
	if p.CW.Usage == nil {
		return r, ErrNoUsage
	}
	u := p.CW.Usage
	// A negative count, or parts whose sum overflows, is a broken payload, not
	// a reading (found by FuzzParseStatusLine): it would steer the refresh policy.
	const most = 1 << 60
	for _, n := range []int{u.Input, u.CacheCreation, u.CacheRead, p.CW.Size} {
		if n < 0 || n > most {
			return StatusReading{}, fmt.Errorf("status line: token count %d out of range", n)
		}
	}
	r.Input, r.CacheCreation, r.CacheRead = u.Input, u.CacheCreation, u.CacheRead
	r.Occupancy = u.Input + u.CacheCreation + u.CacheRead
	return r, nil
}

// Context is context.toml: the latest context reading of the seat, split into
// the fixed floor (system prompt, tools, memory: re-sent every turn, never
// shrinks) and the reclaimable part (the conversation). Each number names its
// source; a reading older than the last turn end is stale.
type Context struct {
	SessionID   string    `toml:"session_id"`
	Occupancy   int       `toml:"occupancy"`
	Floor       int       `toml:"floor"` // 0 with FloorSource "" = not measured yet
	Reclaimable int       `toml:"reclaimable"`
	Window      int       `toml:"window"`
	Source      string    `toml:"source"`
	FloorSource string    `toml:"floor_source"`
	FloorAt     time.Time `toml:"floor_at,omitempty"`
	ReadAt      time.Time `toml:"read_at"`
	LastTurnEnd time.Time `toml:"last_turn_end,omitempty"`
	Model       string    `toml:"model,omitempty"` // as the harness reported it
}

// ContextPath is context.toml.
func (s Seat) ContextPath() string { return s.path("context.toml") }

// Stale reports whether the reading predates the last turn end (the status line
// refreshes only on redraws, so age alone says little).
func (c Context) Stale() bool { return !c.LastTurnEnd.IsZero() && c.ReadAt.Before(c.LastTurnEnd) }

// Pressure is the reclaimable part as a fraction of what the floor leaves of the
// window; ok=false while the floor or the window is unknown.
func (c Context) Pressure() (float64, bool) {
	if c.FloorSource == "" || c.Window <= c.Floor {
		return 0, false
	}
	return float64(c.Reclaimable) / float64(c.Window-c.Floor), true
}

// ContextReadingPayload is the payload of a ContextReading event: an adapter's
// occupancy reading for a harness without a Claude-shaped status line (Codex:
// the token usage of the request that just ended, from its PostModelRequest
// hook). Occupancy is what that request carried; Added is the part of it the
// request itself added (0 when the harness does not say: the floor is then the
// whole first request of a fresh session). Cumulative totals never go here.
type ContextReadingPayload struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
	Occupancy int    `json:"occupancy"`
	Added     int    `json:"added"`
	Window    int    `json:"window"`
	Model     string `json:"model,omitempty"`
	Source    string `json:"source"`
}

// ActivityFile is activity.toml: what the seat is doing now, from its own tool calls (telemetry only).
func (s Seat) ActivityFile() statedir.File[Activity] { return bind[Activity](s, s.ActivityPath()) }

// ContextFile is context.toml: the latest context reading, split into fixed floor and reclaimable part.
func (s Seat) ContextFile() statedir.File[Context] { return bind[Context](s, s.ContextPath()) }
