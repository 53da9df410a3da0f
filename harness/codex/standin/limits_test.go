package standin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// SetLimits puts Codex's rate-limit headers on every answer (the names Codex
// 0.171.0 parses); Refuse answers 429 usage_limit_reached with resets_at the
// exhausted window's reset, logged; nil stops both.
func TestLimitsHeadersAndRefusal(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	lim := &Limits{Primary: &Window{UsedPercent: 42.5, WindowMinutes: 300, ResetAt: reset},
		Secondary: &Window{UsedPercent: 100, WindowMinutes: 10080, ResetAt: reset.Add(time.Hour)},
		Credits:   &Credits{HasCredits: false, Unlimited: false, Balance: "0"}}
	s.SetLimits(lim)
	lim.Refuse = true // SetLimits keeps a copy
	res := postRaw(t, s, body(0, "hello"))
	want := map[string]string{
		"x-codex-primary-used-percent": "42.5", "x-codex-primary-window-minutes": "300",
		"x-codex-primary-reset-at": itoa(reset.Unix()), "x-codex-secondary-used-percent": "100",
		"x-codex-secondary-window-minutes": "10080", "x-codex-secondary-reset-at": itoa(reset.Add(time.Hour).Unix()),
		"x-codex-credits-has-credits": "false", "x-codex-credits-unlimited": "false", "x-codex-credits-balance": "0",
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	for k, v := range want {
		if got := res.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	s.SetLimits(lim)
	res = postRaw(t, s, body(0, "refused"))
	var e struct {
		Error struct {
			Type     string `json:"type"`
			ResetsAt int64  `json:"resets_at"`
		} `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&e)
	if res.StatusCode != http.StatusTooManyRequests || e.Error.Type != "usage_limit_reached" || e.Error.ResetsAt != reset.Add(time.Hour).Unix() ||
		res.Header.Get("x-codex-secondary-used-percent") != "100" {
		t.Fatalf("refusal: %d %+v %v", res.StatusCode, e, res.Header)
	}
	if rows := s.Requests(); rows[len(rows)-1].Status != http.StatusTooManyRequests || rows[len(rows)-1].NewInput != "refused" {
		t.Fatalf("refusal logged as %+v", rows[len(rows)-1])
	}
	s.SetLimits(nil)
	res = postRaw(t, s, body(0, "after"))
	if res.StatusCode != http.StatusOK || res.Header.Get("x-codex-primary-used-percent") != "" {
		t.Fatalf("after SetLimits(nil): %d %v", res.StatusCode, res.Header)
	}
}

func postRaw(t *testing.T, s *Server, b string) *http.Response {
	t.Helper()
	res, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
