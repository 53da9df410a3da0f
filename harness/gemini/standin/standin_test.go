package standin

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/standinkit"
)

func post(t *testing.T, s *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// prompt is shaped as Gemini CLI 0.61.0 sent a session's first turn
// (docs/testdata/gemini-0.61.0-2026-12-04): the session context and the
// prompt as two parts of one user content.
const prompt = `{"contents":[{"role":"user","parts":[{"text":"<session_context>setup</session_context>"},` +
	`{"text":"[pantty] msg=g1 nonce=abc mentions=0\nhello"}]}]}`

// TestTheCallsGeminiCLIMakes: the turn streams one SSE answer quoting the
// prompt's first line with usage; the Auto router gets JSON it can parse;
// countTokens answers; each lands in the log with its kind and new input.
func TestTheCallsGeminiCLIMakes(t *testing.T) {
	t.Parallel()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	resp := post(t, s, "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse", prompt)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("turn: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var text strings.Builder
	var usage Usage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "data: ")
		if !ok {
			continue
		}
		var c struct {
			Candidates []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
			UsageMetadata Usage `json:"usageMetadata"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("SSE chunk %q: %v", data, err)
		}
		text.WriteString(c.Candidates[0].Content.Parts[0].Text)
		if c.UsageMetadata.TotalTokenCount > 0 {
			usage = c.UsageMetadata
		}
	}
	if text.String() != "standin received: [pantty] msg=g1 nonce=abc mentions=0" || usage.PromptTokenCount == 0 {
		t.Fatalf("turn reply %q, usage %+v", text.String(), usage)
	}

	resp = post(t, s, "/v1beta/models/gemini-3.5-flash-lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"route this"}]}],"generationConfig":{"responseMimeType":"application/json"}}`)
	var routed struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string } `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	json.NewDecoder(resp.Body).Decode(&routed)
	var answer struct {
		Score int `json:"complexity_score"`
	}
	if len(routed.Candidates) != 1 || json.Unmarshal([]byte(routed.Candidates[0].Content.Parts[0].Text), &answer) != nil || answer.Score == 0 {
		t.Fatalf("router answer %+v is not the JSON the router asks for", routed)
	}

	resp = post(t, s, "/v1beta/models/x:countTokens", `{}`)
	var count struct{ TotalTokens int }
	if json.NewDecoder(resp.Body).Decode(&count); resp.StatusCode != 200 || count.TotalTokens == 0 {
		t.Fatalf("countTokens: %d %+v", resp.StatusCode, count)
	}

	rows := s.Requests()
	kinds := []string{}
	for _, r := range rows {
		kinds = append(kinds, r.Kind)
	}
	if strings.Join(kinds, ",") != "turn,router,count_tokens" || rows[0].NewInput != "[pantty] msg=g1 nonce=abc mentions=0\nhello" || rows[0].Contents != 1 || rows[0].Context != "<session_context>setup</session_context>" || rows[0].Model != "gemini-3.8-flash" {
		t.Fatalf("log: %+v", rows)
	}
}

// TestFaultsAnswerInGooglesShape: an outage answers every model request with
// the status and error body the Gemini API uses; an unknown path is a 404.
func TestFaultsAnswerInGooglesShape(t *testing.T) {
	t.Parallel()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		f      standinkit.Fault
		code   int
		status string
	}{
		{standinkit.FaultAuth, 401, "UNAUTHENTICATED"},
		{standinkit.FaultBilling, 429, "RESOURCE_EXHAUSTED"},
		{standinkit.FaultServer, 500, "INTERNAL"},
		{standinkit.FaultUnavailable, 503, "UNAVAILABLE"},
	} {
		if err := s.SetFault(c.f); err != nil {
			t.Fatal(err)
		}
		resp := post(t, s, "/v1beta/models/m:streamGenerateContent?alt=sse", prompt)
		var e struct {
			Error struct {
				Code    int
				Message string
				Status  string
			}
		}
		json.NewDecoder(resp.Body).Decode(&e)
		if resp.StatusCode != c.code || e.Error.Code != c.code || e.Error.Status != c.status || e.Error.Message == "" {
			t.Errorf("%s: %d %+v", c.f, resp.StatusCode, e)
		}
	}
	s.SetFault(standinkit.FaultNone)
	if resp := post(t, s, "/v1/other", `{}`); resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
}
