package standin

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// body builds a Codex-shaped request: developer instructions, tools, history
// and the prompt as the last user message.
func body(history int, prompt string) string {
	input := []any{map[string]any{"type": "message", "role": "developer",
		"content": []any{map[string]string{"type": "input_text", "text": strings.Repeat("You are a test. ", 100)}}}}
	for i := 0; i < history; i++ {
		input = append(input,
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]string{"type": "input_text", "text": "earlier"}}},
			map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]string{"type": "output_text", "text": "ok"}}})
	}
	input = append(input, map[string]any{"type": "message", "role": "user",
		"content": []any{map[string]string{"type": "input_text", "text": prompt}}})
	b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "input": input, "prompt_cache_key": "thread-1",
		"tools": []any{map[string]any{"type": "function", "name": "exec_command", "description": strings.Repeat("runs ", 50)}}})
	return string(b)
}

func post(t *testing.T, s *Server, b string) (int, []string, map[string]any) {
	t.Helper()
	res, err := http.Post(s.URL()+"/v1/responses", "application/json", strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var events []string
	var completed map[string]any
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("bad event data %q", d)
			}
			events = append(events, m["type"].(string))
			if m["type"] == "response.completed" {
				completed = m["response"].(map[string]any)
			}
		}
	}
	return res.StatusCode, events, completed
}

// A turn streams the Responses events ending in response.completed with usage
// that grows with what was sent; the reply quotes the prompt's first line; the
// log keeps the new input, the thread and the usage.
func TestStreamUsageAndLog(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, events, done := post(t, s, body(0, "[pantty] msg=a nonce=n\nhello"))
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if code != 200 || len(events) < 8 || strings.Join(events[:4], ",") != strings.Join(want, ",") || events[len(events)-1] != "response.completed" {
		t.Fatalf("status %d events %v", code, events)
	}
	text := done["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if text != "standin received: [pantty] msg=a nonce=n" {
		t.Fatalf("reply %q", text)
	}
	post(t, s, body(3, "second"))
	log := s.Requests()
	if len(log) != 2 || log[0].Kind != "turn" || log[0].Thread != "thread-1" || log[1].NewInput != "second" || log[1].Messages != 7 {
		t.Fatalf("log %+v", log)
	}
	a, b := log[0].Usage, log[1].Usage
	if b.InputTokens <= a.InputTokens || a.InputTokensDetails.CachedTokens != 0 || b.InputTokensDetails.CachedTokens == 0 ||
		b.InputTokensDetails.CachedTokens >= b.InputTokens {
		t.Fatalf("usage %+v then %+v: want growth and a cached floor on the second", a, b)
	}
}

// Markers script a 429 and a failed stream.
func TestScriptedRefusals(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, _, _ := post(t, s, body(0, "x [standin:429 reset=5s]")); code != 429 {
		t.Fatalf("429 marker: status %d", code)
	}
	_, events, _ := post(t, s, body(0, "x [standin:fail]"))
	if events[len(events)-1] != "response.failed" {
		t.Fatalf("fail marker: events %v", events)
	}
	if _, err := Start(Options{Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("a non-loopback listen address was accepted")
	}
}

// A bash marker is answered with an exec_command function call, and the
// request that carries its output back is a tool_result answered with text, so
// a turn with one tool call ends instead of calling the tool again.
func TestBashMarkerIsAFunctionCall(t *testing.T) {
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, events, done := post(t, s, body(0, "run\n[standin:bash=echo hi"))
	out, _ := done["output"].([]any)
	if len(out) != 1 || out[0].(map[string]any)["type"] != "function_call" ||
		out[0].(map[string]any)["arguments"] != `{"cmd":"echo hi"}` || !strings.Contains(strings.Join(events, " "), "function_call_arguments.done") {
		t.Fatalf("events %v, output %v: want one exec_command call", events, out)
	}
	call := out[0].(map[string]any)
	var req map[string]any
	json.Unmarshal([]byte(body(0, "run\n[standin:bash=echo hi")), &req)
	req["input"] = append(req["input"].([]any), call,
		map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": "hi\n"})
	b, _ := json.Marshal(req)
	_, _, done = post(t, s, string(b))
	out, _ = done["output"].([]any)
	if len(out) != 1 || out[0].(map[string]any)["type"] != "message" {
		t.Fatalf("the tool's output was answered with %v, want a text message", out)
	}
	rows := s.Requests()
	if last := rows[len(rows)-1]; last.Kind != "tool_result" || last.ToolOutput != "hi\n" {
		t.Fatalf("log row %+v: want tool_result with the output", last)
	}
}
