package appserver

import (
	"fmt"
	"strings"
	"time"
)

// MethodRateLimits is the server's notification of the account's rate-limit
// windows: Codex reads the backend's x-codex-* headers on each model answer
// (a 200, or a 429 usage_limit_reached) and forwards them before the turn's
// turn/completed (measured on 0.171.0, docs/codex.md "Rate-limit windows").
// A seat reads it so it sends no message into a window it knows is used up.
const MethodRateLimits = "account/rateLimits/updated"

// RateLimitsNote is account/rateLimits/updated's params. The schema calls it
// a sparse update: a null field is unknown, not cleared.
type RateLimitsNote struct {
	RateLimits RateLimits `json:"rateLimits"`
}

// RateLimits is one RateLimitSnapshot: a limit family's two windows and the
// account's credits (the fields pantty reads).
type RateLimits struct {
	LimitID   *string     `json:"limitId"`
	Primary   *RateWindow `json:"primary"`
	Secondary *RateWindow `json:"secondary"`
	Credits   *Credits    `json:"credits"`
}

// RateWindow is one window: how much of it is used (an integer percent:
// Codex rounds the header's value) and when it resets (Unix seconds).
type RateWindow struct {
	UsedPercent        int    `json:"usedPercent"`
	WindowDurationMins *int64 `json:"windowDurationMins"`
	ResetsAt           *int64 `json:"resetsAt"`
}

// Credits says whether the account can go on past its windows.
type Credits struct {
	HasCredits bool `json:"hasCredits"`
	Unlimited  bool `json:"unlimited"`
}

// Exhausted is a used-up window read from account/rateLimits/updated: the
// provider will refuse until Until, in Words.
type Exhausted struct {
	Until time.Time
	Words string
}

// LimitReached reads an account/rateLimits/updated notification and reports
// a window of the default limit family ("codex", or none named: a family
// named after one model limits only that model) used up (usedPercent ≥ 100)
// whose reset is after now, unless the credits say the account goes on
// (hasCredits or unlimited). With both windows used up the later reset
// holds. ok is false for anything else: a window below 100, one with no
// reset time (nothing to wait for: the turn's own refusal decides), a reset
// already past, another message.
func LimitReached(m Message, now time.Time) (Exhausted, bool) {
	r, ok := defaultLimits(m)
	if !ok || r.goesOn() {
		return Exhausted{}, false
	}
	var e Exhausted
	var words []string
	for _, w := range []struct {
		name string
		w    *RateWindow
	}{{"primary", r.Primary}, {"secondary", r.Secondary}} {
		if w.w == nil || w.w.UsedPercent < 100 || w.w.ResetsAt == nil {
			continue
		}
		at := time.Unix(*w.w.ResetsAt, 0).UTC()
		if !at.After(now) {
			continue
		}
		span := ""
		if m := w.w.WindowDurationMins; m != nil {
			span = fmt.Sprintf(" (%d min)", *m)
		}
		words = append(words, fmt.Sprintf("%s window%s %d%% used, resets %s", w.name, span, w.w.UsedPercent, at.Format(time.RFC3339)))
		if at.After(e.Until) {
			e.Until = at
		}
	}
	if e.Until.IsZero() {
		return Exhausted{}, false
	}
	e.Words = LimitsWords + strings.Join(words, "; ")
	return e, true
}

// LimitsWords starts every Exhausted.Words: a block recorded from a note
// reads as one (a refused turn's block carries the harness's own words).
const LimitsWords = "Codex rate limit reached: "

// LimitsClear reports whether m is a rate-limits note of the default
// family that shows the account can go on: at least one window reported
// and none used up, or credits (or an unlimited plan) to go on with. A
// note with no window (the stand-in's plain answers: every field null)
// says nothing and is not clear.
func LimitsClear(m Message) bool {
	r, ok := defaultLimits(m)
	if !ok {
		return false
	}
	if r.goesOn() {
		return true
	}
	seen := false
	for _, w := range []*RateWindow{r.Primary, r.Secondary} {
		if w == nil {
			continue
		}
		if w.UsedPercent >= 100 {
			return false
		}
		seen = true
	}
	return seen
}

// defaultLimits reads an account/rateLimits/updated notification of the
// default limit family ("codex", or none named: a family named after one
// model limits only that model); ok is false for anything else.
func defaultLimits(m Message) (RateLimits, bool) {
	n, ok := paramsOf[RateLimitsNote](m, MethodRateLimits)
	if !ok {
		return RateLimits{}, false
	}
	r := n.RateLimits
	if r.LimitID != nil && *r.LimitID != "" && *r.LimitID != "codex" {
		return RateLimits{}, false
	}
	return r, true
}

// goesOn reports whether the credits say the account goes on past its
// windows (hasCredits or an unlimited plan).
func (r RateLimits) goesOn() bool {
	c := r.Credits
	return c != nil && (c.HasCredits || c.Unlimited)
}
