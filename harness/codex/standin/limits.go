package standin

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Limits are the account's rate-limit windows as the Codex backend states
// them on every Responses answer, in its own headers (the names Codex
// 0.171.0's codex-api parses: x-codex-{primary,secondary}-used-percent,
// -window-minutes, -reset-at in Unix seconds, and x-codex-credits-has-credits,
// -unlimited, -balance). Codex turns them into the app server's
// account/rateLimits/updated, so a test can show a seat an exhausted window
// before a message is sent into it.
type Limits struct {
	Primary, Secondary *Window
	// Credits, when set, sends the credits headers (Codex reads them only
	// when both booleans are present).
	Credits *Credits
	// Refuse answers every model request 429 usage_limit_reached (the ChatGPT
	// plan's refusal, resets_at = the latest exhausted window's reset) with
	// the headers, instead of serving it.
	Refuse bool
}

// Window is one rate-limit window.
type Window struct {
	UsedPercent   float64
	WindowMinutes int
	// ResetAt is sent as whole Unix seconds; zero sends no reset header.
	ResetAt time.Time
}

// Credits is the account's credit state.
type Credits struct {
	HasCredits, Unlimited bool
	Balance               string
}

// SetLimits makes every later /v1/responses answer (served, scripted error
// or fault) carry l's headers; nil stops them.
func (s *Server) SetLimits(l *Limits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l != nil {
		c := *l
		l = &c
	}
	s.limits = l
}

func (s *Server) currentLimits() *Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// header writes l's headers on h.
func (l *Limits) header(h http.Header) {
	if l == nil {
		return
	}
	for name, w := range map[string]*Window{"primary": l.Primary, "secondary": l.Secondary} {
		if w == nil {
			continue
		}
		h.Set("x-codex-"+name+"-used-percent", strconv.FormatFloat(w.UsedPercent, 'f', -1, 64))
		if w.WindowMinutes != 0 {
			h.Set("x-codex-"+name+"-window-minutes", strconv.Itoa(w.WindowMinutes))
		}
		if !w.ResetAt.IsZero() {
			h.Set("x-codex-"+name+"-reset-at", strconv.FormatInt(w.ResetAt.Unix(), 10))
		}
	}
	if c := l.Credits; c != nil {
		h.Set("x-codex-credits-has-credits", strconv.FormatBool(c.HasCredits))
		h.Set("x-codex-credits-unlimited", strconv.FormatBool(c.Unlimited))
		if c.Balance != "" {
			h.Set("x-codex-credits-balance", c.Balance)
		}
	}
}

// resetsAt is the latest reset of an exhausted window (zero if none).
func (l *Limits) resetsAt() time.Time {
	var at time.Time
	for _, w := range []*Window{l.Primary, l.Secondary} {
		if w != nil && w.UsedPercent >= 100 && w.ResetAt.After(at) {
			at = w.ResetAt
		}
	}
	return at
}

// refuseUsage answers 429 usage_limit_reached as the ChatGPT backend does:
// the error body names the plan and the reset (Codex reads error.type,
// plan_type and resets_at).
func refuseUsage(w http.ResponseWriter, l *Limits) {
	e := map[string]any{"type": "usage_limit_reached", "code": "usage_limit_reached",
		"message": "The usage limit has been reached", "plan_type": "plus", "param": nil}
	if at := l.resetsAt(); !at.IsZero() {
		e["resets_at"] = at.Unix()
		e["resets_in_seconds"] = max(0, int(time.Until(at)/time.Second))
		e["message"] = fmt.Sprintf("The usage limit has been reached; it resets at %s", at.UTC().Format(time.RFC3339))
	}
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": e})
}
