package standin

import (
	"encoding/json"
	"strings"

	"github.com/pantty/pantty/harness/standinkit"
)

// apiRequest is the part of a Responses API request the stand-in reads.
type apiRequest struct {
	Model          string            `json:"model"`
	Stream         bool              `json:"stream"`
	Instructions   string            `json:"instructions"`
	Tools          []json.RawMessage `json:"tools"`
	Input          []json.RawMessage `json:"input"`
	PromptCacheKey string            `json:"prompt_cache_key"`
}

// item is the part of an input item the stand-in reads.
type item struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"` // a function_call_output's
}

// texts returns a message item's text parts in order (a string content is one).
func (it item) texts() []string {
	return standinkit.Texts(it.Content, "input_text", "output_text", "text")
}

// parse decodes a Responses request into the log row and measures it.
func parse(body []byte, r *Request) (apiRequest, error) {
	var a apiRequest
	if err := json.Unmarshal(body, &a); err != nil {
		return a, err
	}
	r.Model, r.Stream, r.Thread = a.Model, a.Stream, a.PromptCacheKey
	r.InstructionsBytes, r.Tools, r.Items = len(a.Instructions), len(a.Tools), len(a.Input)
	items := make([]item, len(a.Input))
	lastOut, lastUser := -1, -1
	for i, raw := range a.Input {
		json.Unmarshal(raw, &items[i])
		it := items[i]
		if it.Type == "message" || it.Type == "" && it.Role != "" {
			if it.Role == "user" || it.Role == "assistant" {
				r.Messages++
			}
			if it.Role == "user" {
				lastUser = i
			}
		}
		if it.Role == "assistant" || strings.HasSuffix(it.Type, "_call") || it.Type == "reasoning" {
			lastOut = i
		}
	}
	if lastUser >= 0 {
		t := items[lastUser].texts()
		r.NewInput = strings.Join(t, "\n")
		var ctx []string
		for i := lastOut + 1; i < len(items); i++ {
			if i == lastUser || items[i].Role != "user" && items[i].Role != "developer" {
				continue
			}
			ctx = append(ctx, items[i].texts()...)
		}
		r.Context = strings.Join(ctx, "\n")
	}
	toolResult := false
	for i := max(lastUser, lastOut) + 1; i >= 0 && i < len(items); i++ {
		if items[i].Type == "function_call_output" {
			toolResult = true
			var out string
			if json.Unmarshal(items[i].Output, &out) != nil {
				out = string(items[i].Output)
			}
			r.ToolOutput += out
		}
	}
	r.Kind = standinkit.Kind(isCompaction(r.NewInput) || isCompaction(a.Instructions) && len(a.Tools) == 0, len(a.Tools) > 0, toolResult)
	return a, nil
}

// isCompaction recognises Codex's summarisation request: its last user text
// asks for a checkpoint summary of the conversation for the next context.
func isCompaction(text string) bool {
	return standinkit.Asks(text, "context checkpoint compaction", "handoff summary", "summarize the conversation")
}

// usage splits the request's size into the API's usage fields (see the package
// comment), remembering what it has seen like a prompt cache.
func (s *Server) usage(a apiRequest) Usage {
	var u Usage
	floor := append([]byte(a.Instructions), standinkit.JoinRaw(a.Tools)...)
	ft := standinkit.Tokens(len(floor))
	u.InputTokens += ft
	if s.cache.Seen(floor) {
		u.InputTokensDetails.CachedTokens += ft
	}
	var prefix []byte
	for i, raw := range a.Input {
		prefix = append(prefix, raw...)
		t := standinkit.Tokens(len(raw))
		u.InputTokens += t
		if s.cache.Seen(prefix) && i < len(a.Input)-1 {
			u.InputTokensDetails.CachedTokens += t
		}
	}
	if u.InputTokens == 0 {
		u.InputTokens = 1
	}
	return u
}
