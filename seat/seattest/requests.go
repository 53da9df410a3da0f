package seattest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
)

// Request is one row of the simulator's request log: what reached the model.
type Request struct {
	Time         string `json:"time"` // when the model got it (RFC 3339, nanoseconds)
	SessionID    string `json:"session_id"`
	PromptID     string `json:"prompt_id"`
	Kind         string `json:"kind"`
	NewInput     string `json:"new_input"`
	Injected     string `json:"injected"`
	HistoryTurns int    `json:"history_turns"`
	Error        string `json:"error"` // the API failure the model answered with ("" for a reply)
}

// MsgID returns the pantty message id a request carried, from its guard header.
func (r Request) MsgID() string {
	id, _, _, ok := guard.MatchHeader(r.NewInput)
	if !ok {
		return ""
	}
	return id
}

// Requests reads the simulator's request log.
func (h *Harness) Requests() []Request {
	f, err := os.Open(filepath.Join(h.Seat().HarnessDir(), "requests.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			h.T.Fatalf("request log: %v", err)
		}
		out = append(out, r)
	}
	return out
}

// At is when the request reached the model (zero when the row has no time).
func (r Request) At() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.Time)
	return t
}

// DialogKeys reads the simulator's dialog.jsonl: every key its modal dialog
// received while it was open (PANTTY_SIM_DIALOG, [sim:dialog]), in order.
func (h *Harness) DialogKeys() []DialogKey {
	b, err := os.ReadFile(filepath.Join(h.Seat().HarnessDir(), "dialog.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		h.T.Fatal(err)
	}
	var out []DialogKey
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var k DialogKey
		if err := json.Unmarshal([]byte(l), &k); err != nil {
			h.T.Fatalf("dialog.jsonl: %v", err)
		}
		out = append(out, k)
	}
	return out
}

// DialogKey is one key the simulator's dialog received: its kind (enter,
// paste, text, clear, escape, …), a text key's or paste's text, and the
// option it answered when it closed the dialog.
type DialogKey struct {
	Key    string `json:"key"`
	Text   string `json:"text"`
	Answer string `json:"answer"`
}

// ModelTurns counts, per message id, the model turns whose new input carried it.
func (h *Harness) ModelTurns() map[string]int { return h.turns(true) }

// AnsweredTurns counts, per message id, the model turns whose new input carried
// it and that the model answered (not an API failure such as an outage's).
func (h *Harness) AnsweredTurns() map[string]int { return h.turns(false) }

func (h *Harness) turns(failed bool) map[string]int {
	n := map[string]int{}
	for _, r := range h.Requests() {
		if r.Kind == "turn" && (failed || r.Error == "") {
			if id := r.MsgID(); id != "" {
				n[id]++
			}
		}
	}
	return n
}
