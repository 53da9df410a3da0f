package standin

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// body builds a Claude Code-shaped request: a system prompt, tools, history, and
// a last user message whose text blocks are a system reminder and the prompt.
func body(stream bool, history int, prompt string) string {
	msgs := []any{}
	for i := range history {
		msgs = append(msgs, map[string]any{"role": "user", "content": "earlier " + strconv.Itoa(i)},
			map[string]any{"role": "assistant", "content": []any{map[string]string{"type": "text", "text": "ok"}}})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": []any{
		map[string]string{"type": "text", "text": "<system-reminder>\nToday is a day.\n</system-reminder>"},
		map[string]string{"type": "text", "text": prompt},
	}})
	b, _ := json.Marshal(map[string]any{
		"model": "claude-test", "stream": stream, "max_tokens": 1000,
		"system":   []any{map[string]string{"type": "text", "text": strings.Repeat("You are a test. ", 100)}},
		"tools":    []any{map[string]any{"name": "Bash", "description": strings.Repeat("runs things ", 50)}},
		"messages": msgs,
	})
	return string(b)
}

func post(t *testing.T, s *Server, path, b string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(b))
	req.Header.Set("content-type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// sse reads a streamed answer into its event names and the concatenated text.
func sse(t *testing.T, r io.Reader) (events []string, text string, start, delta map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(r)
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev = strings.TrimPrefix(line, "event: ")
			events = append(events, ev)
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("event %s: bad data %q", ev, line)
			}
			if d["type"] != ev {
				t.Fatalf("event %s carries type %v", ev, d["type"])
			}
			switch ev {
			case "message_start":
				start = d["message"].(map[string]any)
			case "content_block_delta":
				text += d["delta"].(map[string]any)["text"].(string)
			case "message_delta":
				delta = d
			}
		}
	}
	return events, text, start, delta
}

func TestStreamingReplyQuotesThePromptAndLogsTheTurn(t *testing.T) {
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	s := start(t, Options{LogPath: log})
	prompt := "\n\n<pasted_content id=\"cf4c\">\n[pantty] msg=m1 nonce=0123456789ab mentions=0\n<<<pantty-0123456789ab\nhi\npantty-0123456789ab>>>\n</pasted_content id=\"cf4c\">\n"
	res := post(t, s, "/v1/messages", body(true, 2, prompt))
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("content-type"), "text/event-stream") {
		t.Fatalf("status %d, content-type %q", res.StatusCode, res.Header.Get("content-type"))
	}
	events, text, start, delta := sse(t, res.Body)
	want := []string{"message_start", "content_block_start", "ping"}
	if strings.Join(events[:3], ",") != strings.Join(want, ",") ||
		strings.Join(events[len(events)-3:], ",") != "content_block_stop,message_delta,message_stop" {
		t.Fatalf("events %v", events)
	}
	if text != "standin received: [pantty] msg=m1 nonce=0123456789ab mentions=0" {
		t.Fatalf("reply %q does not quote the prompt's first line", text)
	}
	if start["role"] != "assistant" || start["model"] != "claude-test" {
		t.Fatalf("message_start %v", start)
	}
	if delta["delta"].(map[string]any)["stop_reason"] != "end_turn" {
		t.Fatalf("message_delta %v", delta)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests logged", len(reqs))
	}
	r := reqs[0]
	if r.Kind != "turn" || r.NewInput != prompt || !strings.Contains(r.Context, "system-reminder") ||
		r.Messages != 5 || r.Tools != 1 || r.SystemBytes == 0 || !r.Stream || r.Status != 200 {
		t.Fatalf("logged %+v", r)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var fromFile Request
	if err := json.Unmarshal(data, &fromFile); err != nil || fromFile.NewInput != prompt {
		t.Fatalf("log file %q: %v", data, err)
	}
}

// Usage must follow what was sent: a longer history costs more, a repeated
// system prompt and history prefix are read from the "cache", and the numbers in
// message_start are the logged ones.
func TestUsageGrowsWithTheRequest(t *testing.T) {
	s := start(t, Options{})
	var totals []int
	for _, h := range []int{0, 3, 10} {
		res := post(t, s, "/v1/messages", body(true, h, "next"))
		_, _, st, _ := sse(t, res.Body)
		u := st["usage"].(map[string]any)
		got := int(u["input_tokens"].(float64) + u["cache_creation_input_tokens"].(float64) + u["cache_read_input_tokens"].(float64))
		totals = append(totals, got)
	}
	reqs := s.Requests()
	for i, r := range reqs {
		if r.Usage.Total() != totals[i] {
			t.Fatalf("request %d: streamed total %d, logged %+v", i, totals[i], r.Usage)
		}
	}
	if !(totals[0] < totals[1] && totals[1] < totals[2]) {
		t.Fatalf("totals %v do not grow with the history", totals)
	}
	if reqs[0].Usage.CacheReadInputTokens != 0 || reqs[0].Usage.CacheCreationInputTokens == 0 {
		t.Fatalf("first request: %+v (nothing can be cached yet)", reqs[0].Usage)
	}
	// The system prompt and tools are the same every time: read from the cache.
	if reqs[1].Usage.CacheReadInputTokens == 0 {
		t.Fatalf("second request: %+v (the floor was seen before)", reqs[1].Usage)
	}
	// Sending the same request again: everything but the last message is a read.
	res := post(t, s, "/v1/messages", body(true, 10, "next"))
	sse(t, res.Body)
	again := s.Requests()[3].Usage
	if again.CacheCreationInputTokens != 0 || again.Total() != reqs[2].Usage.Total() {
		t.Fatalf("repeat: %+v after %+v", again, reqs[2].Usage)
	}
}

func TestNonStreamingAndCountTokens(t *testing.T) {
	s := start(t, Options{})
	res := post(t, s, "/v1/messages", body(false, 0, "plain please"))
	var m struct {
		Type    string `json:"type"`
		Content []struct{ Text string }
		Usage   Usage
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil || m.Type != "message" || len(m.Content) != 1 ||
		m.Content[0].Text != "standin received: plain please" || m.Usage.Total() == 0 {
		t.Fatalf("non-streaming answer %+v (%v)", m, err)
	}
	small := post(t, s, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	big := post(t, s, "/v1/messages/count_tokens", body(false, 20, "x"))
	var a, b struct {
		InputTokens int `json:"input_tokens"`
	}
	json.NewDecoder(small.Body).Decode(&a)
	json.NewDecoder(big.Body).Decode(&b)
	if a.InputTokens <= 0 || b.InputTokens <= a.InputTokens {
		t.Fatalf("count_tokens %d then %d", a.InputTokens, b.InputTokens)
	}
	if k := s.Requests()[1].Kind; k != "count_tokens" {
		t.Fatalf("kind %q", k)
	}
}

func TestUnknownPathIsLoggedAnd404(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s := start(t, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, f)
	}})
	res := post(t, s, "/api/whatever", "{}")
	mu.Lock()
	defer mu.Unlock()
	if res.StatusCode != 404 || len(lines) != 1 {
		t.Fatalf("status %d, log %v", res.StatusCode, lines)
	}
	if r := s.Requests()[0]; r.Kind != "other" || r.Path != "/api/whatever" || r.Status != 404 {
		t.Fatalf("logged %+v", r)
	}
}

func TestMarkersScriptRefusals(t *testing.T) {
	s := start(t, Options{})
	res := post(t, s, "/v1/messages", body(true, 0, "[standin:429 reset=90s] please"))
	if res.StatusCode != 429 || res.Header.Get("retry-after") != "90" {
		t.Fatalf("429: status %d, retry-after %q", res.StatusCode, res.Header.Get("retry-after"))
	}
	reset, err := time.Parse(time.RFC3339, res.Header.Get("anthropic-ratelimit-requests-reset"))
	if err != nil || time.Until(reset) < 80*time.Second || time.Until(reset) > 100*time.Second {
		t.Fatalf("reset header %q (%v)", res.Header.Get("anthropic-ratelimit-requests-reset"), err)
	}
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	json.NewDecoder(res.Body).Decode(&e)
	if e.Type != "error" || e.Error.Type != "rate_limit_error" || !strings.Contains(e.Error.Message, "in 90s") {
		t.Fatalf("429 body %+v", e)
	}
	res = post(t, s, "/v1/messages", body(true, 0, "[standin:529]"))
	json.NewDecoder(res.Body).Decode(&e)
	if res.StatusCode != 529 || e.Error.Type != "overloaded_error" {
		t.Fatalf("529: %d %+v", res.StatusCode, e)
	}
	res = post(t, s, "/v1/messages", body(true, 0, "x [standin:error=500]"))
	if res.StatusCode != 500 {
		t.Fatalf("error=500: %d", res.StatusCode)
	}
	res = post(t, s, "/v1/messages", body(true, 0, "[standin:reply=hello [there]]\nmore"))
	if _, text, _, _ := sse(t, res.Body); text != "hello [there]" {
		t.Fatalf("reply marker: %q", text)
	}
	// A marker in an earlier text block (a reminder, an interrupted prompt) is not
	// this request's script: only the prompt's own markers count.
	b := strings.Replace(body(true, 0, "plain"), "Today is a day.", "[standin:529]", 1)
	if res := post(t, s, "/v1/messages", b); res.StatusCode != 200 {
		t.Fatalf("a marker outside the prompt was applied: %d", res.StatusCode)
	}
	if got := s.Requests()[0].Script; got != "429 reset=90s" {
		t.Fatalf("script %q", got)
	}
}

func TestQueueScriptsTheNextTurns(t *testing.T) {
	s := start(t, Options{})
	s.Queue(Reply{Status: 529}, Reply{Text: "scripted"})
	if res := post(t, s, "/v1/messages", body(true, 0, "a")); res.StatusCode != 529 {
		t.Fatalf("first: %d", res.StatusCode)
	}
	if _, text, _, _ := sse(t, post(t, s, "/v1/messages", body(true, 0, "b")).Body); text != "scripted" {
		t.Fatalf("second: %q", text)
	}
	if _, text, _, _ := sse(t, post(t, s, "/v1/messages", body(true, 0, "c")).Body); text != "standin received: c" {
		t.Fatalf("third: %q", text)
	}
}

func TestSlowStreamEndsWhenTheClientGoesAway(t *testing.T) {
	s := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body(true, 0, "[standin:slow=30s] go")))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The headers and message_start come at once; then the text trickles.
	br := bufio.NewReader(res.Body)
	if line, _ := br.ReadString('\n'); line != "event: message_start\n" {
		t.Fatalf("first line %q", line)
	}
	began := time.Now()
	cancel() // an interrupt: the client closes the stream
	res.Body.Close()
	if r := s.Requests()[0]; r.Script != "slow=30s" {
		t.Fatalf("script %q", r.Script)
	}
	if time.Since(began) > 5*time.Second {
		t.Fatal("cancel took too long")
	}
	// The server is still fine afterwards.
	if _, text, _, _ := sse(t, post(t, s, "/v1/messages", body(true, 0, "after")).Body); text != "standin received: after" {
		t.Fatalf("after cancel: %q", text)
	}
}

func TestCompactionRequestIsAnswered(t *testing.T) {
	s := start(t, Options{})
	prompt := "CRITICAL: Respond with TEXT ONLY.\nYour task is to create a detailed summary of the conversation so far.\n[standin:reply=<summary>short</summary>]"
	_, text, _, _ := sse(t, post(t, s, "/v1/messages", body(true, 4, prompt)).Body)
	if r := s.Requests()[0]; r.Kind != "compact" {
		t.Fatalf("kind %q", r.Kind)
	}
	if text != "<summary>short</summary>" {
		t.Fatalf("reply %q", text)
	}
	_, text, _, _ = sse(t, post(t, s, "/v1/messages", body(true, 4, "Your task is to create a detailed summary of the conversation so far.")).Body)
	if !strings.Contains(text, "<summary>") || !strings.Contains(text, "</summary>") {
		t.Fatalf("default summary %q", text)
	}
}

// TestBashMarkerAsksForAToolCall: [standin:bash=…] answers with a Bash tool_use
// block (stop_reason tool_use); the request carrying its tool_result back is
// logged as tool_result, not as a new turn, and answered with text.
func TestBashMarkerAsksForAToolCall(t *testing.T) {
	s := start(t, Options{})
	res := post(t, s, "/v1/messages", body(false, 0, "go\n[standin:bash=echo 'hi there' > out.txt"))
	var m struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, ID, Name string
			Input          map[string]string
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.StopReason != "tool_use" || len(m.Content) != 1 || m.Content[0].Type != "tool_use" || m.Content[0].Name != "Bash" ||
		m.Content[0].Input["command"] != "echo 'hi there' > out.txt" || m.Content[0].ID == "" {
		t.Fatalf("bash marker answered %+v", m)
	}
	result, _ := json.Marshal(map[string]any{
		"model": "claude-test", "stream": true, "max_tokens": 1000,
		"tools": []any{map[string]any{"name": "Bash"}},
		"messages": []any{
			map[string]any{"role": "user", "content": "go"},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": m.Content[0].ID, "name": "Bash", "input": m.Content[0].Input}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": m.Content[0].ID, "content": "ok"}}},
		},
	})
	if _, text, _, _ := sse(t, post(t, s, "/v1/messages", string(result)).Body); !strings.Contains(text, "tool's result arrived") {
		t.Fatalf("tool result answered %q", text)
	}
	if kinds := []string{s.Requests()[0].Kind, s.Requests()[1].Kind}; kinds[0] != "turn" || kinds[1] != "tool_result" {
		t.Fatalf("logged kinds %v, want [turn tool_result]", kinds)
	}
}
