package standinkit

import (
	"encoding/json"
	"slices"
	"time"
)

// Row is what every stand-in logs of one request, whatever API it imitates;
// a stand-in's own request type embeds it and adds its API's fields (the
// JSON log keeps them flat).
type Row struct {
	Seq    int       `json:"seq"`
	At     time.Time `json:"at"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	// Kind names the request in the stand-in's terms (Kind for the shared
	// ones: turn, tool_result, compact, aux; a stand-in adds its own).
	Kind  string `json:"kind"`
	Model string `json:"model,omitempty"`
	// NewInput is the turn's new input, where the harness puts the submitted
	// prompt (and so pantty's guard header); Context is the rest of that
	// input: what the client added to the turn besides the prompt (hook
	// output, reminders, injected context).
	NewInput string `json:"new_input,omitempty"`
	Context  string `json:"context,omitempty"`
	// Status is the HTTP status answered; Script names the behaviour applied.
	Status int    `json:"status"`
	Script string `json:"script,omitempty"`
	// Body is the request body, when the stand-in keeps bodies.
	Body json.RawMessage `json:"body,omitempty"`
}

// Common is the row itself: a stand-in's request type embeds Row, so this
// names the part every stand-in shares.
func (r Row) Common() Row { return r }

// Logged is a stand-in's request type as everything that reads its log
// takes it: Row embedded (Common) and its API's own counts (Counts).
type Logged interface {
	Common() Row
	Counts() Counts
}

// Counts is what the model APIs' requests say in different words, in common
// ones: the session a request names ("" when its API names none), how many
// messages or contents it carried (more than the first turn's means history
// was carried), and the input tokens answered. Each stand-in's request type
// gives its own (a Counts method).
type Counts struct {
	Session string
	History int
	Input   int
}

// Texts returns a model API message's text parts in order, from its content
// as the APIs write it: a string (one part), or an array of typed parts of
// which those whose type is one of types carry text ("text" in Anthropic's
// Messages API; "input_text" and "output_text" in OpenAI's Responses API).
// The stand-ins read requests with it, and the Claude Code adapter its
// transcript, which logs the same messages.
func Texts(content json.RawMessage, types ...string) []string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []string{s}
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(content, &parts)
	var out []string
	for _, p := range parts {
		if slices.Contains(types, p.Type) {
			out = append(out, p.Text)
		}
	}
	return out
}

// JoinRaw is raw JSON values one after another: the bytes a stand-in counts
// for a request's fixed part (its tools, its system prompt).
func JoinRaw(rs []json.RawMessage) []byte {
	var b []byte
	for _, r := range rs {
		b = append(b, r...)
	}
	return b
}
