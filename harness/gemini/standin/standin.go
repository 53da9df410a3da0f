// Package standin is a loopback stand-in for the Gemini API as Gemini CLI
// 0.61.0 calls it (measured 2026-12-04, docs/gemini.md), so the real CLI can
// be driven on pantty's tmux path with no key and no cost: the CLI is pointed
// at it with GOOGLE_GEMINI_BASE_URL=URL().
//
// It answers POST /v1beta/models/MODEL:METHOD for the three methods the CLI
// uses: streamGenerateContent (?alt=sse; the turn: SSE chunks quoting the
// first line of the new input, with usageMetadata), generateContent (side
// requests: the "Auto" router's JSON complexity question is answered with
// valid JSON — a plain-text answer leaves the CLI retrying and the turn never
// starts — and /compress's summary request with a short summary) and
// countTokens. Every request is kept in a log (memory, and a JSONL file when
// asked) with what the harness sent: the new user input, the model, the kind.
// Faults (harness/standinkit) answer in Google's error shape
// ({"error":{"code","message","status"}}), and the [standin:…] markers of
// harness/standinkit script slow, delayed or failing replies, and a shell
// command the model runs ([standin:bash=…]: a run_shell_command function
// call; the request bringing its output back is a tool_result).
package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/pantty/pantty/harness/standinkit"
)

// Options configure a stand-in (harness/standinkit's; ChunkDelay is not used:
// replies stream in three chunks, four spread over the time when made slow).
type Options = standinkit.Options

// Request is one row of the request log: what reached the stand-in. Kind is
// turn (streamGenerateContent), router (a generateContent that asks for
// JSON: the Auto model router), compress (the summary request of /compress or
// an automatic compression), aux (any other generateContent), count_tokens,
// or other (an unknown path). NewInput is the last text part of the last user
// content, where the CLI puts the submitted prompt (measured: the first turn
// of a session sends its <session_context> as an earlier part of the same
// content), not counting a hook's <hook_context> part after it; Context holds
// that content's other parts.
type Request struct {
	standinkit.Row
	// Contents counts every content sent (more than one: history was carried).
	Contents int   `json:"contents"`
	Usage    Usage `json:"usage"`
	// ToolOutput is what a tool_result request carries back: the function
	// response's output (run_shell_command's "Output: …" text).
	ToolOutput string `json:"tool_output,omitempty"`
}

// Counts says what this API calls history, session and input tokens in
// standinkit's common terms.
func (q Request) Counts() standinkit.Counts {
	return standinkit.Counts{History: q.Contents, Input: q.Usage.PromptTokenCount}
}

// Usage is the API's usageMetadata.
type Usage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

// Server is a running stand-in: standinkit's Base (listener, faults, log,
// scripted replies) and the Gemini API's wire format.
type Server struct {
	*standinkit.Base[Request]
}

// Start listens on loopback and serves until Close.
func Start(opts Options) (*Server, error) {
	s := &Server{}
	return standinkit.Embed(s, &s.Base, opts, http.HandlerFunc(s.serve))
}

func (s *Server) record(r Request) {
	s.Record(func(seq int) Request { r.Seq = seq; return r })
}

// apiRequest is the part of a generateContent request the stand-in reads.
type apiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

// lastUserText splits the last user content's text parts into the last one
// (the new input) and the others (context).
func (a apiRequest) lastUserText() (input, context string) {
	for i := len(a.Contents) - 1; i >= 0; i-- {
		if c := a.Contents[i]; c.Role == "user" || c.Role == "" {
			var parts []string
			for _, p := range c.Parts {
				if p.Text != "" {
					parts = append(parts, p.Text)
				}
			}
			// A hook's additionalContext follows the prompt as a part of its
			// own (<hook_context>…</hook_context>, measured): context, not
			// the input.
			last := len(parts) - 1
			for last > 0 && strings.HasPrefix(parts[last], "<hook_context>") {
				last--
			}
			if last < 0 {
				return "", ""
			}
			rest := append(append([]string(nil), parts[:last]...), parts[last+1:]...)
			return parts[last], strings.Join(rest, "\n")
		}
	}
	return "", ""
}

// toolOutput is the output of the function responses in the last user
// content (ok=false when it carries none: not a tool result).
func (a apiRequest) toolOutput() (string, bool) {
	if len(a.Contents) == 0 {
		return "", false
	}
	var out []string
	for _, p := range a.Contents[len(a.Contents)-1].Parts {
		if p.FunctionResponse == nil {
			continue
		}
		var r struct {
			Output string `json:"output"`
		}
		if json.Unmarshal(p.FunctionResponse.Response, &r) == nil && r.Output != "" {
			out = append(out, r.Output)
		} else {
			out = append(out, string(p.FunctionResponse.Response))
		}
	}
	return strings.Join(out, "\n"), len(out) > 0
}

// isCompression recognises the CLI's summary request (/compress or an
// automatic compression): it asks for a state snapshot of the conversation.
func isCompression(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "state_snapshot") || strings.Contains(t, "compress") && strings.Contains(t, "history")
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	r := Request{Row: standinkit.Row{At: time.Now().UTC(), Method: req.Method, Path: req.URL.Path, Kind: "other"}}
	if s.Opts.KeepBodies {
		r.Body = json.RawMessage(body)
	}
	model, method, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, "/v1beta/models/"), ":")
	if !ok || req.Method != http.MethodPost || !strings.HasPrefix(req.URL.Path, "/v1beta/models/") {
		s.Opts.Logf("standin: unknown %s %s", req.Method, req.URL.Path)
		r.Status = http.StatusNotFound
		s.record(r)
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no such method: "+req.URL.Path)
		return
	}
	r.Model = model
	var a apiRequest
	json.Unmarshal(body, &a)
	r.NewInput, r.Context = a.lastUserText()
	r.Contents = len(a.Contents)
	switch {
	case method == "countTokens":
		r.Kind = "count_tokens"
	case method == "streamGenerateContent":
		r.Kind = "turn"
		if out, ok := a.toolOutput(); ok {
			r.Kind, r.ToolOutput = "tool_result", out
		}
	case a.GenerationConfig.ResponseMimeType == "application/json":
		r.Kind = "router"
	case isCompression(r.NewInput):
		r.Kind = "compress"
	default:
		r.Kind = "aux"
	}
	if f := s.Fault(); f != standinkit.FaultNone && r.Kind != "count_tokens" {
		r.Status, r.Script = faultStatus(f), "fault "+string(f)
		s.record(r)
		writeFault(w, f)
		return
	}
	r.Usage = Usage{PromptTokenCount: standinkit.Tokens(len(body))}
	switch r.Kind {
	case "count_tokens":
		r.Status = http.StatusOK
		s.record(r)
		writeJSON(w, map[string]any{"totalTokens": r.Usage.PromptTokenCount})
	case "turn", "tool_result":
		s.turn(w, req, r)
	default:
		text := "stand-in: " + standinkit.FirstLine(r.NewInput)
		switch r.Kind {
		case "router":
			text = `{"complexity_reasoning":"stand-in","complexity_score":10}`
		case "compress":
			text = "<state_snapshot>stand-in summary of the conversation</state_snapshot>"
		}
		r.Usage.CandidatesTokenCount = standinkit.Tokens(len(text))
		r.Usage.TotalTokenCount = r.Usage.PromptTokenCount + r.Usage.CandidatesTokenCount
		r.Status = http.StatusOK
		s.record(r)
		writeJSON(w, chunk(model, text, r.Usage))
	}
}

// turn answers a streamGenerateContent: a scripted reply first, else the
// prompt's [standin:…] markers, else a quote of its first line.
func (s *Server) turn(w http.ResponseWriter, req *http.Request, r Request) {
	rep, script := standinkit.ParseMarkers(r.NewInput)
	if r.Kind == "tool_result" {
		rep, script = standinkit.Reply{Text: "stand-in: the tool's output arrived"}, "tool_result"
	}
	if q, ok := s.NextQueued(); ok {
		rep, script = q, "queued"
	}
	r.Script = script
	if rep.Delay > 0 && !standinkit.Pause(rep.Delay, req.Context().Done()) {
		r.Status = 499 // the client went away first
		s.record(r)
		return
	}
	if rep.Status >= 400 {
		r.Status = rep.Status
		s.record(r)
		writeError(w, rep.Status, statusName(rep.Status), fmt.Sprintf("stand-in: scripted %d", rep.Status))
		return
	}
	text := rep.Text
	if text == "" {
		text = "standin received: " + standinkit.FirstLine(r.NewInput, "[standin:")
	}
	r.Usage.CandidatesTokenCount = standinkit.Tokens(len(text))
	r.Usage.TotalTokenCount = r.Usage.PromptTokenCount + r.Usage.CandidatesTokenCount
	if rep.Tokens > 0 {
		r.Usage.PromptTokenCount = rep.Tokens
	}
	r.Status = http.StatusOK
	s.record(r)
	w.Header().Set("Content-Type", "text/event-stream")
	if rep.Bash != "" {
		// The model's shell tool, as Gemini CLI 0.61.0 names it: the CLI runs
		// the command (with approval mode yolo) and sends its output back in
		// the next request (kind tool_result).
		c := chunk(r.Model, "", r.Usage)
		c["candidates"].([]any)[0].(map[string]any)["content"] = map[string]any{"role": "model",
			"parts": []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
				"args": map[string]any{"command": rep.Bash, "description": "stand-in"}}}}}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	// Several chunks, as Google's API streams a reply: Gemini CLI 0.61.0's
	// AfterAgent prompt_response for a streamed reply is the text followed
	// by a garbled second copy of its later chunks (measured 2026-12-04; the
	// pane and the chat file hold the text once), so pantty takes the reply
	// from the chat file — a stand-in that streamed one chunk hid that.
	parts := standinkit.Split(text, 3)
	pause := time.Duration(0)
	if rep.Slow > 0 {
		parts = standinkit.Split(text, 4)
		pause = rep.Slow / time.Duration(len(parts))
	}
	flusher, _ := w.(http.Flusher)
	for i, p := range parts {
		c := chunk(r.Model, p, Usage{})
		if i == len(parts)-1 {
			c = chunk(r.Model, p, r.Usage)
		} else {
			delete(c["candidates"].([]any)[0].(map[string]any), "finishReason")
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
		if i < len(parts)-1 && pause > 0 && !standinkit.Pause(pause, req.Context().Done()) {
			return
		}
	}
}

// chunk is one GenerateContentResponse carrying text.
func chunk(model, text string, u Usage) map[string]any {
	c := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"modelVersion": model,
	}
	if u.TotalTokenCount > 0 {
		c["usageMetadata"] = u
	}
	return c
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// writeError answers in Google's error shape.
func writeError(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
}

// faultStatus is the HTTP status a fault answers with on the Gemini API:
// billing is a 429 RESOURCE_EXHAUSTED there (quota), overloaded a 503.
func faultStatus(f standinkit.Fault) int {
	switch f {
	case standinkit.FaultBilling:
		return http.StatusTooManyRequests
	case standinkit.FaultOverloaded:
		return http.StatusServiceUnavailable
	}
	return f.Status()
}

func writeFault(w http.ResponseWriter, f standinkit.Fault) {
	code := faultStatus(f)
	msg := map[standinkit.Fault]string{
		standinkit.FaultAuth:        "API key not valid. Please pass a valid API key.",
		standinkit.FaultBilling:     "You exceeded your current quota, please check your plan and billing details.",
		standinkit.FaultRateLimit:   "Resource has been exhausted (e.g. check quota).",
		standinkit.FaultServer:      "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
		standinkit.FaultUnavailable: "The service is currently unavailable.",
		standinkit.FaultOverloaded:  "The model is overloaded. Please try again later.",
	}[f]
	if f == standinkit.FaultRateLimit {
		_, after := standinkit.RetryAfter(0)
		w.Header().Set("Retry-After", after)
	}
	writeError(w, code, statusName(code), msg)
}

// statusName is Google's status string for an HTTP code.
func statusName(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}
