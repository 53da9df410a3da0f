package seat

import (
	"regexp"
	"strings"
	"sync"
	"time"
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
