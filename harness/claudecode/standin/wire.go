package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness/standinkit"
)

// The Messages API's wire format as the stand-in writes it: error bodies with
// the real API's headers, assistant messages with one text or tool_use block,
// and the SSE stream of a reply.

// refuse answers a scripted error with the headers the real API sends with it.
func (s *Server) refuse(w http.ResponseWriter, rep Reply) {
	switch rep.Status {
	case http.StatusTooManyRequests:
		reset := rep.Reset
		if reset <= 0 {
			reset = 30 * time.Second
		}
		at := time.Now().Add(reset).UTC().Format(time.RFC3339)
		h := w.Header()
		h.Set("retry-after", fmt.Sprint(int((reset+time.Second-1)/time.Second)))
		for _, k := range []string{"requests", "tokens", "input-tokens", "output-tokens"} {
			h.Set("anthropic-ratelimit-"+k+"-limit", "50")
			h.Set("anthropic-ratelimit-"+k+"-remaining", "0")
			h.Set("anthropic-ratelimit-"+k+"-reset", at)
		}
		writeError(w, rep.Status, "rate_limit_error", fmt.Sprintf("standin: rate limit exceeded; it resets at %s (in %ds)", at, int(reset/time.Second)))
	case 529:
		writeError(w, rep.Status, "overloaded_error", "Overloaded")
	default:
		writeError(w, rep.Status, "api_error", fmt.Sprintf("standin: scripted error %d", rep.Status))
	}
}

// fail answers a request during an outage the way the Messages API does: the
// status and error body of each fault as the real API sends them.
func (s *Server) fail(w http.ResponseWriter, f standinkit.Fault) {
	switch f {
	case standinkit.FaultAuth:
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
	case standinkit.FaultBilling:
		writeError(w, http.StatusBadRequest, "invalid_request_error",
			"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")
	case standinkit.FaultRateLimit:
		s.refuse(w, Reply{Status: http.StatusTooManyRequests})
	case standinkit.FaultServer:
		writeError(w, http.StatusInternalServerError, "api_error", "Internal server error")
	case standinkit.FaultUnavailable:
		writeError(w, http.StatusServiceUnavailable, "api_error", "Service unavailable")
	default:
		s.refuse(w, Reply{Status: f.Status()})
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.Header().Set("request-id", requestID())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

var idMu sync.Mutex
var idN int

func requestID() string {
	idMu.Lock()
	defer idMu.Unlock()
	idN++
	return fmt.Sprintf("req_standin%012d", idN)
}

// block is the one content block of a reply: text, or a tool call whose input
// is streamed as partial JSON.
type block struct {
	text  string            // a text block's text
	tool  string            // a tool call's tool name ("" for text)
	id    string            // a tool call's id
	input map[string]string // a tool call's input
}

func textBlock(text string) block { return block{text: text} }

func toolUse(name string, input map[string]string) block {
	return block{tool: name, id: "toolu_" + strings.TrimPrefix(requestID(), "req_"), input: input}
}

// body is what the block's deltas carry: the text, or the input as JSON.
func (b block) body() string {
	if b.tool == "" {
		return b.text
	}
	in, _ := json.Marshal(b.input)
	return string(in)
}

// stop is the stop_reason a message ending with this block carries.
func (b block) stop() string {
	if b.tool == "" {
		return "end_turn"
	}
	return "tool_use"
}

// wire is the whole block as a non-streaming answer holds it; empty opens the
// block of a stream, before its deltas.
func (b block) wire(empty bool) map[string]any {
	if b.tool == "" {
		if empty {
			return map[string]any{"type": "text", "text": ""}
		}
		return map[string]any{"type": "text", "text": b.text}
	}
	m := map[string]any{"type": "tool_use", "id": b.id, "name": b.tool, "input": b.input}
	if empty {
		m["input"] = map[string]any{}
	}
	return m
}

// message is a complete assistant message (the non-streaming answer, and the
// message_start frame with empty content).
func message(model string, b block, u Usage, full bool) map[string]any {
	m := map[string]any{
		"id": "msg_" + strings.TrimPrefix(requestID(), "req_"), "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": u,
	}
	if full {
		m["content"] = []any{b.wire(false)}
		m["stop_reason"] = b.stop()
	}
	return m
}

// stream writes the reply as the Messages API's SSE events. With slow > 0 the
// text is spread over that long in small chunks; a client that goes away (an
// interrupt) ends it early.
func (s *Server) stream(w http.ResponseWriter, req *http.Request, model string, b block, u Usage, slow time.Duration) {
	fl, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("content-type", "text/event-stream")
	h.Set("cache-control", "no-cache")
	h.Set("request-id", requestID())
	w.WriteHeader(http.StatusOK)
	send := func(event string, data any) error {
		b, _ := json.Marshal(data)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		if fl != nil {
			fl.Flush()
		}
		return nil
	}
	start := u
	start.OutputTokens = 1
	send("message_start", map[string]any{"type": "message_start", "message": message(model, b, start, false)})
	// The block opens empty and its body arrives as deltas: text, or a tool
	// call's input as partial JSON.
	deltaType, deltaKey := "text_delta", "text"
	if b.tool != "" {
		deltaType, deltaKey = "input_json_delta", "partial_json"
	}
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": b.wire(true)})
	send("ping", map[string]string{"type": "ping"})
	chunks := standinkit.Split(b.body(), 16)
	pause := s.Opts.ChunkDelay
	if slow > 0 {
		pause = slow / time.Duration(len(chunks)+1)
	}
	for _, c := range chunks {
		if pause > 0 {
			select {
			case <-time.After(pause):
			case <-req.Context().Done():
				return
			}
		}
		if send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": deltaType, deltaKey: c}}) != nil {
			return
		}
	}
	if slow > 0 {
		select {
		case <-time.After(pause):
		case <-req.Context().Done():
			return
		}
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": b.stop(), "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": u.OutputTokens}})
	send("message_stop", map[string]string{"type": "message_stop"})
}
