package standin

import (
	"crypto/sha256"
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
// request that carries a tool's result back, within a turn), compact (the
// summarisation request of a compaction), aux (a side request without tools:
// titles, topic checks), count_tokens, or other (an unknown path). NewInput
// is the last text block of the last user message, where Claude Code puts the
// submitted prompt; Context holds that message's earlier text blocks: system
// reminders, hook output (SessionStart's stdout after a compaction),
// "[Request interrupted by user]".
type Request struct {
	standinkit.Row
	Stream      bool `json:"stream,omitempty"`
	SystemBytes int  `json:"system_bytes"`
	Tools       int  `json:"tools"`
	// Messages is the whole message count: more than one means history was carried.
	Messages int   `json:"messages"`
	Usage    Usage `json:"usage"`
}

// Counts says what this API calls history, session and input tokens in
// standinkit's common terms.
func (q Request) Counts() standinkit.Counts {
	return standinkit.Counts{History: q.Messages, Input: q.Usage.InputTokens}
}

// Usage is the Messages API usage object.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// Total is every input token the request carried.
func (u Usage) Total() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Reply is a scripted answer for one request (see the package comment's
// markers): harness/standinkit's, shared with the Codex stand-in. Fail does
// nothing here.
type Reply = standinkit.Reply

// Server is a running stand-in: standinkit's Base (listener, faults, log,
// scripted replies; URL() is the base URL for ANTHROPIC_BASE_URL) and the
// Messages API's wire format.
type Server struct {
	*standinkit.Base[Request]

	mu   sync.Mutex
	seen map[[32]byte]bool // hashes of system+tools floors and message prefixes answered before
}

// Start listens and serves until Close.
func Start(opts Options) (*Server, error) {
	s := &Server{seen: map[[32]byte]bool{}}
	return standinkit.Embed(s, &s.Base, opts, http.HandlerFunc(s.serve))
}

// record numbers r and appends it to the log (and the log file).
func (s *Server) record(r Request) {
	s.Record(func(seq int) Request { r.Seq = seq; return r })
}

// maxBody bounds a request body: Claude Code's requests are a few hundred KiB.
const maxBody = 64 << 20

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimSuffix(req.URL.Path, "/")
	body, _ := io.ReadAll(io.LimitReader(req.Body, maxBody))
	r := Request{Row: standinkit.Row{At: time.Now().UTC(), Method: req.Method, Path: req.URL.Path}}
	if s.Opts.KeepBodies && json.Valid(body) {
		r.Body = body
	}
	switch {
	case req.Method == http.MethodPost && (path == "/v1/messages" || path == "/v1/messages/count_tokens") && s.Fault() != standinkit.FaultNone:
		s.parse(body, &r)
		if path != "/v1/messages" {
			r.Kind = "count_tokens"
		}
		f := s.Fault()
		r.Status, r.Script = f.Status(), "fault "+string(f)
		if f == standinkit.FaultBilling {
			r.Status = http.StatusBadRequest
		}
		s.record(r)
		s.fail(w, f)
	case req.Method == http.MethodPost && path == "/v1/messages":
		s.messages(w, req, body, r)
	case req.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		s.countTokens(w, body, r)
	case req.Method == http.MethodHead || req.Method == http.MethodGet && (path == "" || path == "/v1"):
		// A reachability check (claude sends HEAD /api/hello unless
		// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set): answered 200.
		r.Kind, r.Status = "other", http.StatusOK
		s.record(r)
		w.WriteHeader(http.StatusOK)
	default:
		s.Opts.Logf("standin: unknown %s %s (%d bytes): 404", req.Method, req.URL.Path, len(body))
		r.Kind, r.Status = "other", http.StatusNotFound
		s.record(r)
		writeError(w, http.StatusNotFound, "not_found_error", "standin: no such path "+req.URL.Path)
	}
}

// apiRequest is the part of a Messages API request the stand-in reads.
type apiRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	System   json.RawMessage   `json:"system"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []apiMessage      `json:"messages"`
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// carriesToolResult reports whether the message holds a tool_result block: the
// client sending a tool's output back inside a turn, not a new prompt.
func (m apiMessage) carriesToolResult() bool {
	var blocks []struct {
		Type string `json:"type"`
	}
	json.Unmarshal(m.Content, &blocks)
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// texts returns the message's text blocks in order (a string content is one).
func (m apiMessage) texts() []string { return standinkit.Texts(m.Content, "text") }

// parse decodes a Messages API request into the log row and measures it.
func (s *Server) parse(body []byte, r *Request) (apiRequest, error) {
	var a apiRequest
	if err := json.Unmarshal(body, &a); err != nil {
		return a, err
	}
	r.Model, r.Stream = a.Model, a.Stream
	r.SystemBytes, r.Tools, r.Messages = len(a.System), len(a.Tools), len(a.Messages)
	toolResult := false
	for i := len(a.Messages) - 1; i >= 0; i-- {
		if a.Messages[i].Role == "user" {
			toolResult = a.Messages[i].carriesToolResult()
			if t := a.Messages[i].texts(); len(t) > 0 {
				r.NewInput = t[len(t)-1]
				r.Context = strings.Join(t[:len(t)-1], "\n")
			}
			break
		}
	}
	r.Kind = standinkit.Kind(isCompaction(r.NewInput), len(a.Tools) > 0, toolResult)
	return a, nil
}

// isCompaction recognises Claude Code's summarisation request: its last user
// message asks for a summary of the conversation so far.
func isCompaction(text string) bool {
	return standinkit.Asks(text, "summary of the conversation", "summarize the conversation", "your task is to create a detailed summary")
}

// usage splits the request's size into the API's usage fields (see the package
// comment). It also remembers what it has seen, like a prompt cache.
func (s *Server) usage(a apiRequest) Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u Usage
	floor := append(append([]byte{}, a.System...), standinkit.JoinRaw(a.Tools)...)
	ft := standinkit.Tokens(len(floor))
	fh := sha256.Sum256(floor)
	if s.seen[fh] {
		u.CacheReadInputTokens += ft
	} else {
		u.CacheCreationInputTokens += ft
		s.seen[fh] = true
	}
	h := sha256.New()
	for i, m := range a.Messages {
		b, _ := json.Marshal(m)
		h.Write(b)
		var key [32]byte
		copy(key[:], h.Sum(nil))
		t := standinkit.Tokens(len(b))
		switch {
		case i == len(a.Messages)-1:
			u.InputTokens += t
		case s.seen[key]:
			u.CacheReadInputTokens += t
		default:
			u.CacheCreationInputTokens += t
		}
		s.seen[key] = true
	}
	if u.InputTokens == 0 {
		u.InputTokens = 1
	}
	return u
}

func (s *Server) countTokens(w http.ResponseWriter, body []byte, r Request) {
	_, err := s.parse(body, &r)
	r.Kind = "count_tokens"
	if err != nil {
		r.Status = http.StatusBadRequest
		s.record(r)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "standin: "+err.Error())
		return
	}
	// What would be counted is the whole request: bytes/4, like the usage.
	u := Usage{InputTokens: standinkit.Tokens(len(body))}
	r.Usage, r.Status = u, http.StatusOK
	s.record(r)
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": u.InputTokens})
}

func (s *Server) messages(w http.ResponseWriter, req *http.Request, body []byte, r Request) {
	a, err := s.parse(body, &r)
	if err != nil {
		r.Kind, r.Status = "other", http.StatusBadRequest
		s.record(r)
		writeError(w, http.StatusBadRequest, "invalid_request_error", "standin: "+err.Error())
		return
	}
	rep, script := s.script(r)
	r.Script = script
	if script != "" {
		s.Opts.Logf("standin: request %s %q: %s", r.Kind, firstLine(r.NewInput), script)
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-req.Context().Done():
			r.Status = 499 // the client went away first
			s.record(r)
			return
		}
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		r.Status = rep.Status
		s.record(r)
		s.refuse(w, rep)
		return
	}
	r.Usage = s.usage(a)
	if rep.Tokens > 0 {
		// The whole input, as fresh input: a context at a chosen size.
		r.Usage = Usage{InputTokens: rep.Tokens}
	}
	var out block
	switch {
	case rep.Bash != "":
		out = toolUse("Bash", map[string]string{"command": rep.Bash, "description": "standin tool call"})
	case rep.Read != "":
		out = toolUse("Read", map[string]string{"file_path": rep.Read})
	case rep.Text != "":
		out = textBlock(rep.Text)
	default:
		out = textBlock(defaultReply(r))
	}
	r.Usage.OutputTokens = standinkit.Tokens(len(out.body()))
	r.Status = http.StatusOK
	s.record(r)
	model := a.Model
	if model == "" {
		model = "standin"
	}
	if !a.Stream {
		writeJSON(w, http.StatusOK, message(model, out, r.Usage, true))
		return
	}
	s.stream(w, req, model, out, r.Usage, rep.Slow)
}

// script picks the behaviour for a request: a queued Reply for a turn, else the
// markers in its last user text (for turns and compactions only, so a side
// request quoting the prompt does not take the turn's script).
func (s *Server) script(r Request) (Reply, string) {
	if r.Kind == "turn" {
		if rep, ok := s.NextQueued(); ok {
			return rep, fmt.Sprintf("queued %+v", rep)
		}
	}
	if r.Kind != "turn" && r.Kind != "compact" {
		return Reply{}, ""
	}
	return ParseMarkers(r.NewInput)
}

// ParseMarkers reads the [standin:…] markers of a text into a Reply, and
// returns the markers it understood (empty when none): standinkit's.
func ParseMarkers(text string) (Reply, string) { return standinkit.ParseMarkers(text) }

// defaultReply quotes the first line of the new input, so a guard header (with
// its message id and nonce) appears in the assistant's answer and transcript.
func defaultReply(r Request) string {
	if r.Kind == "tool_result" {
		return "standin: the tool's result arrived; the turn ends here."
	}
	if r.Kind == "compact" {
		return "<analysis>standin: nothing to analyse.</analysis>\n\n<summary>\n" +
			"1. Primary Request and Intent: standin compaction summary of " + fmt.Sprint(r.Messages) + " messages.\n" +
			"</summary>"
	}
	return "standin received: " + firstLine(r.NewInput)
}

// firstLine is the first line of a prompt, skipping the <pasted_content …> line
// Claude Code wraps a long paste in, cut to 200 bytes.
func firstLine(s string) string { return standinkit.FirstLine(s, "<pasted_content ") }
