package codex_test

import (
	"io"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/codex"
	"github.com/pantty/pantty/seat/seattest"
)

// A failed request's error is classified the way the driver's provider-refusal
// check reads it; the texts are the ones Codex 0.171.0 printed.
func TestClassifyError(t *testing.T) {
	for msg, want := range map[string]string{
		"exceeded retry limit, last status: 429 Too Many Requests":     "rate_limit",
		"exceeded retry limit, last status: 503 Service Unavailable":   "overloaded",
		"You've hit your usage limit. Try again later.":                "usage_limit",
		"exceeded retry limit, last status: 500 Internal Server Error": "api_error",
	} {
		if got := codex.ClassifyError(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
		if seat.IsProviderRefusal(codex.ClassifyError(msg)) != (want != "api_error") {
			t.Errorf("%q: provider refusal %v", msg, !(want != "api_error"))
		}
	}
}

// notify is the turn end only for the seat's thread and only when no Stop came:
// Codex's title thread (another id, no rollout) and a turn the hooks already
// ended are recorded, never acted on.
func TestNotifyFiltersTheTitleThreadAndHookEndedTurns(t *testing.T) {
	h := seattest.New(t, "notify")
	s := h.Seat()
	if err := s.Write(s.SessionPath(), seat.Session{Harness: "sim", ID: "01a237bc-dcb1-7042-8b96-e42ff21a4e27", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	note := func(thread, turn string) string {
		return `{"type":"agent-turn-complete","thread-id":"` + thread + `","turn-id":"` + turn +
			`","cwd":"/w","client":"codex-tui","input-messages":["[pantty] msg=m1 nonce=n\nhi"],"last-assistant-message":"ok"}`
	}
	count := func(kind string) int {
		names, _ := s.PendingEvents()
		n := 0
		for _, name := range names {
			if strings.HasSuffix(name, "-"+kind+".json") {
				n++
			}
		}
		return n
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bd-04f8-7ed3-bb9a-3040b5d4c3f9", "t-title"), io.Discard)
	if count(seat.EvStop) != 0 || count(codex.EvCodexNotify) != 1 {
		t.Fatalf("the title thread's notify made a turn end")
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bc-dcb1-7042-8b96-e42ff21a4e27", "t1"), io.Discard)
	if count(seat.EvUserPromptSubmit) != 1 || count(seat.EvStop) != 1 {
		t.Fatalf("the seat's notify without a Stop hook: want UserPromptSubmit and Stop")
	}
	names, _ := s.PendingEvents()
	ev, err := seat.ReadEvent(s.EventsDir() + "/" + names[len(names)-1])
	if err != nil || ev.Kind != seat.EvStop || ev.Fields.PromptID != "t1" || ev.Fields.SessionID != "01a237bc-dcb1-7042-8b96-e42ff21a4e27" {
		t.Fatalf("Stop from notify: %+v %v", ev.Fields, err)
	}
	codex.RunNotify(h.Home, h.Name, note("01a237bc-dcb1-7042-8b96-e42ff21a4e27", "t1"), io.Discard)
	if count(seat.EvStop) != 1 || count(codex.EvCodexNotify) != 2 {
		t.Fatalf("a second notify for a turn that has its Stop must only be recorded")
	}
}
