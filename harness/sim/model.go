package sim

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// usage is Claude's per-request token usage. The simulator splits a
// request's occupancy so that cache_read_input_tokens is the fixed floor
// (system prompt, tools), cache_creation_input_tokens is the conversation
// already held (reclaimable by compaction) and input_tokens is what this
// request adds; output_tokens is the reply.
type usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// total is the context occupancy the usage describes: everything that will
// be in the window on the next request.
func (u usage) total() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}

// tokenState is the part of a session that survives --resume. It is stored
// on every transcript row (field "sim") so resuming is reading the last row.
type tokenState struct {
	Reclaimable int     `json:"reclaimable"`
	Turns       int     `json:"turns"`
	TotalInput  int     `json:"total_input_tokens"`
	TotalOutput int     `json:"total_output_tokens"`
	CostUSD     float64 `json:"cost_usd"`
	Last        usage   `json:"last_usage"`
	// Compacted and SinceCompact decide whether /compact has anything to do:
	// like Claude Code, the simulator refuses a compaction with no turn since
	// the last one.
	Compacted    bool `json:"compacted,omitempty"`
	SinceCompact int  `json:"since_compact,omitempty"`
}

// Prices per million tokens, Sonnet-like, so cost moves plausibly.
const (
	priceInput      = 3.0
	priceCacheWrite = 3.75
	priceCacheRead  = 0.30
	priceOutput     = 15.0
)

func (u usage) cost() float64 {
	return (float64(u.InputTokens)*priceInput +
		float64(u.CacheCreationInputTokens)*priceCacheWrite +
		float64(u.CacheReadInputTokens)*priceCacheRead +
		float64(u.OutputTokens)*priceOutput) / 1e6
}

// tokens approximates a tokenizer: one token per four characters, rounded up.
func tokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// apiFailure is a scripted refusal by the (simulated) provider.
type apiFailure struct {
	code    string // rate_limit | overloaded | authentication_failed | server_error
	message string // shown and sent as last_assistant_message
}

// markers are the scripted behaviours a prompt can ask for; they are how
// tests provoke slow turns, hangs, crashes and refusals deterministically.
type markers struct {
	slow    time.Duration
	hasSlow bool
	hang    bool
	crash   bool
	failure *apiFailure
	tools   []toolCall // [sim:tool=NAME:ARG]: tool calls the "model" makes
}

// toolCall is a simulated tool invocation: it fires PreToolUse and PostToolUse
// with Claude Code's payload shape (tool_name, tool_input), so activity hooks
// can be tested; no tool really runs.
type toolCall struct {
	name string
	arg  string // Bash: the command; file tools: the path
}

// input is the tool_input object Claude Code would send for this call.
func (c toolCall) input() map[string]any {
	switch c.name {
	case "Bash":
		return map[string]any{"command": c.arg, "description": "simulated"}
	case "Read", "Edit", "Write":
		return map[string]any{"file_path": c.arg}
	}
	return map[string]any{"input": c.arg}
}

var (
	slowRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:slow=([^\]]*)\]`) })
	rateRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:429(?: reset=([^\]]*))?\]`) })
	swallowRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:swallow-enter=(\d+)\]`) })
	toolRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:tool=([A-Za-z]+):([^\]]*)\]`) })
	untilRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:until=(\d+)\]`) })
	replyLenRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[sim:reply-bytes=(\d+)\]`) })
	mentionRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@(\S+)`) })
	interrupts = "[Request interrupted by user]"
)

func parseMarkers(prompt string) markers {
	var m markers
	if s := slowRe().FindStringSubmatch(prompt); s != nil {
		if d, err := time.ParseDuration(s[1]); err == nil && d >= 0 {
			m.slow, m.hasSlow = d, true
		}
	}
	m.hang = strings.Contains(prompt, "[sim:hang]")
	m.crash = strings.Contains(prompt, "[sim:crash]")
	for _, s := range toolRe().FindAllStringSubmatch(prompt, -1) {
		m.tools = append(m.tools, toolCall{name: s[1], arg: s[2]})
	}
	if s := rateRe().FindStringSubmatch(prompt); s != nil {
		msg := "API Error: Request rejected (429)"
		if s[1] != "" {
			msg += " · resets " + s[1]
		}
		m.failure = &apiFailure{code: "rate_limit", message: msg}
	} else if strings.Contains(prompt, "[sim:overloaded]") {
		m.failure = &apiFailure{code: "overloaded", message: "API Error: Overloaded (529)"}
	} else if strings.Contains(prompt, "[sim:auth]") {
		// Claude Code 2.1.328's words for a 401 (measured).
		m.failure = &apiFailure{code: "authentication_failed", message: "Invalid API key · Fix external API key"}
	} else if strings.Contains(prompt, "[sim:5xx]") {
		m.failure = &apiFailure{code: "server_error", message: "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment."}
	}
	// [sim:until=UNIX] scopes a refusal in time: the provider refuses only before
	// then, and the same text goes through afterwards, as a real rate limit ends.
	// (A refused message is resubmitted with the same text, so without it a 429
	// marker refuses forever; the soak's provider-refusal fault needs one that ends.)
	if s := untilRe().FindStringSubmatch(prompt); s != nil && m.failure != nil {
		if n, err := strconv.ParseInt(s[1], 10, 64); err == nil && !time.Now().Before(time.Unix(n, 0)) {
			m.failure = nil
		}
	}
	return m
}

// swallowCount is N from a [sim:swallow-enter=N] marker in the input box.
func swallowCount(box string) int {
	s := swallowRe().FindStringSubmatch(box)
	if s == nil {
		return 0
	}
	n, _ := strconv.Atoi(s[1])
	return n
}

// replyFor is the deterministic model: it proves what arrived (length and
// first line) so a test can match a nonce in the reply.
func replyFor(prompt string) string {
	first, _, _ := strings.Cut(prompt, "\n")
	r := fmt.Sprintf("sim: received %d chars\n> %s", utf8.RuneCountInString(prompt), first)
	// [sim:reply-bytes=N] pads the reply to N bytes, so a test can get a long
	// answer back whole; the padding numbers its lines to show nothing is lost.
	if m := replyLenRe().FindStringSubmatch(prompt); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil && n <= maxReplyBytes {
			var b strings.Builder
			b.WriteString(r)
			for i := 1; b.Len() < n; i++ {
				fmt.Fprintf(&b, "\nline %06d of the long reply", i)
			}
			r = b.String()[:max(n, len(r))]
		}
	}
	return r
}

// maxReplyBytes bounds [sim:reply-bytes=N].
const maxReplyBytes = 8 << 20

// mention is an @path found in a prompt that resolved to a readable file.
type mention struct {
	path    string
	content string
}

// findMentions expands @path mentions (at the start or after whitespace)
// that name an existing regular file relative to cwd; others stay plain text
// as in Claude.
func findMentions(prompt, cwd string) []mention {
	var out []mention
	seen := map[string]bool{}
	for _, m := range mentionRe().FindAllStringSubmatch(prompt, -1) {
		p := m[1]
		if seen[p] {
			continue
		}
		seen[p] = true
		full := p
		if !filepath.IsAbs(full) {
			full = filepath.Join(cwd, p)
		}
		st, err := os.Stat(full)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(full)
		if err != nil {
			continue
		}
		out = append(out, mention{path: p, content: string(b)})
	}
	return out
}

// newUUID returns a random RFC 4122 version 4 UUID, the shape Claude uses
// for session and prompt ids.
func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func firstLine(s string) string {
	l, rest, more := strings.Cut(s, "\n")
	if more && rest != "" {
		return l + " …"
	}
	return l
}
