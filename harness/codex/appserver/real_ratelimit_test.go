package appserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/harness/standinkit"
)

// methodRateLimits is the app server's notification of the account's
// rate-limit windows.
const methodRateLimits = "account/rateLimits/updated"

// TestRateLimitsArriveBeforeTheTurnEnds measures what the real app server
// forwards of the Codex backend's rate-limit headers (the stand-in's
// SetLimits) as account/rateLimits/updated: on a 200 below the limit, on a
// 200 with a window used up, on a 429 usage_limit_reached and on a 429
// insufficient_quota with the headers; where the notification comes relative
// to turn/completed (and so to the next turn/start, which a client sends only
// after it), with a second of listening after the turn's end for a late one;
// and whether Codex itself still sends the next turn to a used-up window.
func TestRateLimitsArriveBeforeTheTurnEnds(t *testing.T) {
	r := newRig(t)
	th := r.thread()
	soon := time.Now().Add(time.Hour).Truncate(time.Second)
	week := time.Now().Add(7 * 24 * time.Hour).Truncate(time.Second)
	cases := []struct {
		name  string
		lim   *standin.Limits
		fault standinkit.Fault
	}{
		{"200 below the limit", &standin.Limits{Primary: &standin.Window{UsedPercent: 42.5, WindowMinutes: 300, ResetAt: soon},
			Secondary: &standin.Window{UsedPercent: 10, WindowMinutes: 10080, ResetAt: week}}, ""},
		{"200 primary used up", &standin.Limits{Primary: &standin.Window{UsedPercent: 100, WindowMinutes: 300, ResetAt: soon},
			Secondary: &standin.Window{UsedPercent: 10, WindowMinutes: 10080, ResetAt: week}}, ""},
		{"200 used up, credits", &standin.Limits{Primary: &standin.Window{UsedPercent: 100, WindowMinutes: 300, ResetAt: soon},
			Credits: &standin.Credits{HasCredits: true, Balance: "12.50"}}, ""},
		{"429 usage_limit_reached", &standin.Limits{Primary: &standin.Window{UsedPercent: 100, WindowMinutes: 300, ResetAt: soon},
			Secondary: &standin.Window{UsedPercent: 10, WindowMinutes: 10080, ResetAt: week}, Refuse: true}, ""},
		{"429 insufficient_quota", &standin.Limits{Primary: &standin.Window{UsedPercent: 100, WindowMinutes: 300, ResetAt: soon}}, standinkit.FaultBilling},
		{"200 after, no headers", nil, ""},
	}
	for _, c := range cases {
		r.api.SetLimits(c.lim)
		if err := r.api.SetFault(c.fault); err != nil {
			t.Fatal(err)
		}
		before := len(r.api.Requests())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := time.Now()
		turn, err := r.c.StartTurn(ctx, th.ID, "hello: "+c.name)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		end, log := r.turnEnd(t0, turn.ID, 60*time.Second)
		ended := len(log)
		late := r.listen(t0, time.Second)
		var notes []map[string]any
		for i, s := range append(log, late...) {
			if s.Method != methodRateLimits {
				continue
			}
			var p map[string]any
			json.Unmarshal(s.Params, &p)
			notes = append(notes, map[string]any{"at_ms": int64(s.At), "index": i, "before_turn_completed": i < ended, "params": p})
		}
		sent := 0
		for _, q := range r.api.Requests()[before:] {
			if q.Kind == "turn" {
				sent++
			}
		}
		var info string
		var status int
		if e, ok := appserver.TurnEnd(appserver.Message{Method: log[ended-1].Method, Params: log[ended-1].Params}); ok {
			info, status = e.Info, e.HTTPStatus
		}
		t.Logf("%s: turn %s (%s %d) at %dms; %d turn requests reached the stand-in; %d rateLimits notes: %v; methods %v late %v",
			c.name, end.Status, info, status, log[ended-1].At, sent, len(notes), notes, methods(log), methods(late))
		record(t, "ratelimits.jsonl", map[string]any{"case": c.name, "limits": c.lim, "fault": c.fault, "status": end.Status,
			"error": end.Error, "info": info, "info_http": status, "turn_requests": sent, "turn_completed_ms": log[ended-1].At,
			"rate_limits": notes, "methods": methods(log), "late_methods": methods(late)})
	}
	r.api.SetFault(standinkit.FaultNone)
}

// listen collects the notifications of the next d.
func (r *rig) listen(start time.Time, d time.Duration) []seen {
	var log []seen
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-r.c.Notifications():
			if !ok {
				return log
			}
			log = append(log, seen{At: time.Since(start) / time.Millisecond, Method: m.Method, Params: m.Params})
		case <-deadline:
			return log
		}
	}
}
