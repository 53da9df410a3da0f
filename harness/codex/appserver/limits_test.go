package appserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// LimitReached holds for a default-family window used up with a reset ahead
// and no credits, the later reset when both are; nothing else holds.
func TestLimitReached(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	note := func(s string) Message { return Message{Method: MethodRateLimits, Params: json.RawMessage(s)} }
	w := func(pct int, reset int64) string {
		return `{"usedPercent":` + itoa(int64(pct)) + `,"windowDurationMins":300,"resetsAt":` + itoa(reset) + `}`
	}
	soon, later := now.Unix()+60, now.Unix()+3600
	for _, c := range []struct {
		name, params string
		until        int64 // 0: no hold
	}{
		{"below", `{"rateLimits":{"limitId":"codex","primary":` + w(99, soon) + `}}`, 0},
		{"primary used up", `{"rateLimits":{"limitId":"codex","primary":` + w(100, soon) + `,"secondary":` + w(10, later) + `}}`, soon},
		{"both: the later", `{"rateLimits":{"primary":` + w(100, soon) + `,"secondary":` + w(100, later) + `}}`, later},
		{"reset past", `{"rateLimits":{"limitId":"codex","primary":` + w(100, now.Unix()) + `}}`, 0},
		{"no reset", `{"rateLimits":{"limitId":"codex","primary":{"usedPercent":100}}}`, 0},
		{"credits", `{"rateLimits":{"limitId":"codex","primary":` + w(100, soon) + `,"credits":{"hasCredits":true,"unlimited":false}}}`, 0},
		{"unlimited", `{"rateLimits":{"limitId":"codex","primary":` + w(100, soon) + `,"credits":{"hasCredits":false,"unlimited":true}}}`, 0},
		{"no credits", `{"rateLimits":{"limitId":"codex","primary":` + w(100, soon) + `,"credits":{"hasCredits":false,"unlimited":false}}}`, soon},
		{"a model's family", `{"rateLimits":{"limitId":"codex_bengalfox","primary":` + w(100, soon) + `}}`, 0},
		{"nulls", `{"rateLimits":{"limitId":"codex","primary":null,"secondary":null,"credits":null}}`, 0},
	} {
		x, ok := LimitReached(note(c.params), now)
		if ok != (c.until != 0) || ok && x.Until.Unix() != c.until {
			t.Errorf("%s: %+v %v, want until %d", c.name, x, ok, c.until)
		}
		if ok && !strings.Contains(x.Words, "100% used, resets ") {
			t.Errorf("%s: words %q", c.name, x.Words)
		}
	}
	if _, ok := LimitReached(Message{Method: MethodTokenUsage, Params: json.RawMessage(`{}`)}, now); ok {
		t.Error("another method held")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// LimitsClear holds for a default-family note whose windows are all below
// 100 % or whose credits go on; a note with no window says nothing.
func TestLimitsClear(t *testing.T) {
	note := func(s string) Message { return Message{Method: MethodRateLimits, Params: json.RawMessage(s)} }
	for _, c := range []struct {
		name, params string
		clear        bool
	}{
		{"below", `{"rateLimits":{"limitId":"codex","primary":{"usedPercent":3},"secondary":{"usedPercent":40}}}`, true},
		{"one used up", `{"rateLimits":{"limitId":"codex","primary":{"usedPercent":3},"secondary":{"usedPercent":100}}}`, false},
		{"credits", `{"rateLimits":{"primary":{"usedPercent":100},"credits":{"hasCredits":true,"unlimited":false}}}`, true},
		{"nulls", `{"rateLimits":{"limitId":"codex","primary":null,"secondary":null,"credits":null}}`, false},
		{"a model's family", `{"rateLimits":{"limitId":"codex_bengalfox","primary":{"usedPercent":3}}}`, false},
	} {
		if got := LimitsClear(note(c.params)); got != c.clear {
			t.Errorf("%s: clear %v, want %v", c.name, got, c.clear)
		}
	}
}
