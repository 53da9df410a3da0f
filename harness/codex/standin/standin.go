package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness/standinkit"
)

// Options configure a stand-in (harness/standinkit's).
type Options = standinkit.Options

// Request is one row of the request log: what reached the stand-in. Kind is
// turn (a main-loop request: it carries tools), tool_result (a main-loop
// request carrying a function call's output back), compact (the
// summarisation request of a compaction), aux (a side request without tools:
// Codex's thread title), or other (an unknown path). NewInput is the text of
// the last user message item, where Codex puts the submitted prompt; Context
// holds the other user and developer texts sent after the last assistant
// output.
type Request struct {
	standinkit.Row
	Stream bool `json:"stream,omitempty"`
	// Thread is the request's prompt_cache_key: Codex sends the thread id.
	Thread string `json:"thread,omitempty"`
	// ToolOutput is the output of the function call a tool_result carries.
	ToolOutput        string `json:"tool_output,omitempty"`
	InstructionsBytes int    `json:"instructions_bytes"`
	Tools             int    `json:"tools"`
	// Items is the whole input item count; Messages counts the user and
	// assistant message items: more than one means history was carried.
	Items    int   `json:"items"`
	Messages int   `json:"messages"`
	Usage    Usage `json:"usage"`
}

// Counts says what this API calls history, session and input tokens in
// standinkit's common terms.
func (q Request) Counts() standinkit.Counts {
	return standinkit.Counts{Session: q.Thread, History: q.Messages, Input: q.Usage.InputTokens}
}

// Usage is the Responses API usage object.
type Usage struct {
	InputTokens         int          `json:"input_tokens"`
	InputTokensDetails  InputDetails `json:"input_tokens_details"`
	OutputTokens        int          `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// InputDetails splits input_tokens: cached_tokens were seen before.
type InputDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Reply is a scripted answer (see harness/standinkit).
type Reply = standinkit.Reply

// Server is a running stand-in: standinkit's Base (listener, faults, log,
// scripted replies; URL() is the root: Codex's base_url is URL()+"/v1") and
// the Responses API's wire format.
type Server struct {
	*standinkit.Base[Request]
	cache standinkit.Cache

	mu     sync.Mutex
	ids    int
	limits *Limits
}

// Start listens on loopback and serves until Close.
func Start(opts Options) (*Server, error) {
	s := &Server{}
	return standinkit.Embed(s, &s.Base, opts, http.HandlerFunc(s.serve))
}

func (s *Server) record(r Request) Request {
	return s.Record(func(seq int) Request { r.Seq = seq; return r })
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_standin%012d", prefix, s.ids)
}

// maxBody bounds a request body: Codex's requests are tens of KiB.
const maxBody = 64 << 20

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimSuffix(req.URL.Path, "/")
	body, _ := io.ReadAll(io.LimitReader(req.Body, maxBody))
	r := Request{Row: standinkit.Row{At: time.Now().UTC(), Method: req.Method, Path: req.URL.Path}}
	if s.Opts.KeepBodies && json.Valid(body) {
		r.Body = body
	}
	lim := s.currentLimits()
	if req.Method == http.MethodPost && path == "/v1/responses" {
		lim.header(w.Header())
	}
	switch {
	case req.Method == http.MethodPost && path == "/v1/responses" && lim != nil && lim.Refuse:
		parse(body, &r)
		r.Status, r.Script = http.StatusTooManyRequests, "limits: usage_limit_reached"
		s.record(r)
		refuseUsage(w, lim)
	case req.Method == http.MethodPost && path == "/v1/responses" && s.Fault() != standinkit.FaultNone:
		parse(body, &r)
		f := s.Fault()
		r.Status, r.Script = f.Status(), "fault "+string(f)
		if f == standinkit.FaultBilling {
			r.Status = http.StatusTooManyRequests
		}
		s.record(r)
		fail(w, f)
	case req.Method == http.MethodPost && path == "/v1/responses":
		s.responses(w, req, body, r)
	default:
		s.Opts.Logf("standin: unknown %s %s (%d bytes): 404", req.Method, req.URL.Path, len(body))
		r.Kind, r.Status = "other", http.StatusNotFound
		s.record(r)
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "standin: no such path "+req.URL.Path)
	}
}

func (s *Server) responses(w http.ResponseWriter, req *http.Request, body []byte, r Request) {
	a, err := parse(body, &r)
	if err != nil {
		r.Kind, r.Status = "other", http.StatusBadRequest
		s.record(r)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "standin: "+err.Error())
		return
	}
	rep, script := s.script(r)
	r.Script = script
	if script != "" {
		s.Opts.Logf("standin: request %s %q: %s", r.Kind, standinkit.FirstLine(r.NewInput), script)
	}
	if !standinkit.Pause(rep.Delay, req.Context().Done()) {
		r.Status = 499 // the client went away first
		s.record(r)
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		r.Status = rep.Status
		s.record(r)
		refuse(w, rep)
		return
	}
	r.Usage = s.usage(a)
	if rep.Tokens > 0 {
		r.Usage.InputTokens = rep.Tokens
		r.Usage.InputTokensDetails.CachedTokens = min(r.Usage.InputTokensDetails.CachedTokens, rep.Tokens)
	}
	text := rep.Text
	if text == "" {
		text = defaultReply(r)
	}
	r.Usage.OutputTokens = standinkit.Tokens(len(text))
	r.Usage.TotalTokens = r.Usage.InputTokens + r.Usage.OutputTokens
	r.Status = http.StatusOK
	r = s.record(r)
	model := a.Model
	if model == "" {
		model = "standin"
	}
	resp := s.response(model, text, r.Usage)
	if rep.Bash != "" {
		call := map[string]string{"cmd": rep.Bash}
		if rep.Escalate {
			call["sandbox_permissions"] = "require_escalated"
			call["justification"] = "stand-in: this command asks to run outside the sandbox"
		}
		args, _ := json.Marshal(call)
		resp.call = &funcCall{id: s.id("fc"), callID: s.id("call"), name: "exec_command", args: string(args)}
	}
	if !a.Stream {
		if rep.Fail {
			writeError(w, http.StatusInternalServerError, "server_error", "server_error", "standin: scripted failure")
			return
		}
		writeJSON(w, http.StatusOK, resp.full())
		return
	}
	s.stream(w, req, resp, rep)
}

// script picks the behaviour for a request: a queued Reply for a turn, else the
// markers in its new input (turns and compactions only, so a side request
// quoting the prompt does not take the turn's script).
func (s *Server) script(r Request) (Reply, string) {
	if r.Kind == "turn" {
		if rep, ok := s.NextQueued(); ok {
			return rep, fmt.Sprintf("queued %+v", rep)
		}
	}
	if r.Kind != "turn" && r.Kind != "compact" {
		return Reply{}, ""
	}
	return standinkit.ParseMarkers(r.NewInput)
}

// defaultReply quotes the first line of the new input, so a guard header (with
// its message id and nonce) appears in the assistant's answer and the rollout.
func defaultReply(r Request) string {
	switch r.Kind {
	case "compact":
		return fmt.Sprintf("standin compaction summary of %d messages.", r.Messages)
	case "aux":
		return "standin title"
	case "tool_result":
		return "standin: the tool's result arrived; the turn ends here."
	}
	return "standin received: " + standinkit.FirstLine(r.NewInput)
}

// response is one answer being built: a text message, or a function call.
type response struct {
	id, msgID, model, text string
	usage                  Usage
	created                int64
	call                   *funcCall
}

// funcCall is a function call the stand-in asks the client to run.
type funcCall struct{ id, callID, name, args string }

// item is the call as an output item (args "" opens it in a stream).
func (f funcCall) item(done bool) map[string]any {
	m := map[string]any{"id": f.id, "type": "function_call", "call_id": f.callID, "name": f.name, "arguments": "", "status": "in_progress"}
	if done {
		m["arguments"], m["status"] = f.args, "completed"
	}
	return m
}

func (s *Server) response(model, text string, u Usage) response {
	return response{id: s.id("resp"), msgID: s.id("msg"), model: model, text: text, usage: u, created: time.Now().Unix()}
}

func (r response) message(done bool) map[string]any {
	m := map[string]any{"id": r.msgID, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}
	if done {
		m["status"] = "completed"
		m["content"] = []any{map[string]any{"type": "output_text", "text": r.text, "annotations": []any{}}}
	}
	return m
}

func (r response) object(status string, output []any) map[string]any {
	o := map[string]any{"id": r.id, "object": "response", "created_at": r.created, "status": status,
		"model": r.model, "output": output}
	if status == "completed" {
		o["usage"] = r.usage
	}
	return o
}

func (r response) full() map[string]any {
	if r.call != nil {
		return r.object("completed", []any{r.call.item(true)})
	}
	return r.object("completed", []any{r.message(true)})
}

// streamCall writes a function call's events: the item opened, its arguments
// as one delta, the item done, the response completed.
func (r response) streamCall(send func(string, map[string]any) error) {
	f := r.call
	send("response.output_item.added", map[string]any{"output_index": 0, "item": f.item(false)})
	send("response.function_call_arguments.delta", map[string]any{"item_id": f.id, "output_index": 0, "delta": f.args})
	send("response.function_call_arguments.done", map[string]any{"item_id": f.id, "output_index": 0, "arguments": f.args})
	send("response.output_item.done", map[string]any{"output_index": 0, "item": f.item(true)})
	send("response.completed", map[string]any{"response": r.full()})
}

// stream writes the reply as the Responses API's SSE events. With rep.Slow the
// text is spread over that long; a client that goes away (an interrupt) ends it.
func (s *Server) stream(w http.ResponseWriter, req *http.Request, r response, rep Reply) {
	h := w.Header()
	h.Set("content-type", "text/event-stream")
	h.Set("cache-control", "no-cache")
	h.Set("x-request-id", s.id("req"))
	w.WriteHeader(http.StatusOK)
	out := standinkit.SSE{W: w}
	seq := 0
	send := func(typ string, fields map[string]any) error {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return out.Send(typ, fields)
	}
	done := req.Context().Done()
	send("response.created", map[string]any{"response": r.object("in_progress", []any{})})
	send("response.in_progress", map[string]any{"response": r.object("in_progress", []any{})})
	if r.call != nil {
		r.streamCall(send)
		return
	}
	send("response.output_item.added", map[string]any{"output_index": 0, "item": r.message(false)})
	send("response.content_part.added", map[string]any{"item_id": r.msgID, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	chunks := standinkit.Split(r.text, 16)
	pause := s.Opts.ChunkDelay
	if rep.Slow > 0 {
		pause = rep.Slow / time.Duration(len(chunks)+1)
	}
	for _, c := range chunks {
		if !standinkit.Pause(pause, done) {
			return
		}
		if send("response.output_text.delta", map[string]any{"item_id": r.msgID, "output_index": 0, "content_index": 0, "delta": c}) != nil {
			return
		}
	}
	if rep.Slow > 0 && !standinkit.Pause(pause, done) {
		return
	}
	if rep.Fail {
		fail := r.object("failed", []any{})
		fail["error"] = map[string]string{"code": "server_error", "message": "standin: scripted failure"}
		send("response.failed", map[string]any{"response": fail})
		return
	}
	send("response.output_text.done", map[string]any{"item_id": r.msgID, "output_index": 0, "content_index": 0, "text": r.text})
	send("response.content_part.done", map[string]any{"item_id": r.msgID, "output_index": 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": r.text, "annotations": []any{}}})
	send("response.output_item.done", map[string]any{"output_index": 0, "item": r.message(true)})
	send("response.completed", map[string]any{"response": r.full()})
}

// refuse answers a scripted error with the headers the real API sends with it.
func refuse(w http.ResponseWriter, rep Reply) {
	switch rep.Status {
	case http.StatusTooManyRequests:
		reset, after := standinkit.RetryAfter(rep.Reset)
		h := w.Header()
		h.Set("retry-after", after)
		h.Set("x-ratelimit-limit-requests", "50")
		h.Set("x-ratelimit-remaining-requests", "0")
		h.Set("x-ratelimit-reset-requests", after+"s")
		writeError(w, rep.Status, "rate_limit_exceeded", "rate_limit_exceeded",
			fmt.Sprintf("standin: rate limit reached; try again in %ds", int(reset/time.Second)))
	default:
		writeError(w, rep.Status, "server_error", "server_error", fmt.Sprintf("standin: scripted error %d", rep.Status))
	}
}

// fail answers a request during an outage the way the OpenAI API does: the
// status and error body of each fault as the real API sends them.
func fail(w http.ResponseWriter, f standinkit.Fault) {
	switch f {
	case standinkit.FaultAuth:
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
			"Incorrect API key provided: standin-key. You can find your API key at https://platform.openai.com/account/api-keys.")
	case standinkit.FaultBilling:
		writeError(w, http.StatusTooManyRequests, "insufficient_quota", "insufficient_quota",
			"You exceeded your current quota, please check your plan and billing details.")
	case standinkit.FaultRateLimit:
		refuse(w, Reply{Status: http.StatusTooManyRequests})
	case standinkit.FaultServer:
		writeError(w, http.StatusInternalServerError, "server_error", "server_error",
			"The server had an error while processing your request. Sorry about that!")
	case standinkit.FaultUnavailable:
		writeError(w, http.StatusServiceUnavailable, "server_error", "server_error", "The server is overloaded or not ready yet.")
	default:
		refuse(w, Reply{Status: f.Status()})
	}
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg, "param": nil}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
