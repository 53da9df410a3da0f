package standinkit_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	claude "github.com/pantty/pantty/harness/claudecode/standin"
	openai "github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/harness/standinkit"
)

// faulty is what the two stand-ins share for an outage test.
type faulty interface {
	URL() string
	SetFault(standinkit.Fault) error
	Close() error
}

// Each fault answers every model request with the provider's own status and
// error body (the fields a harness reads: Anthropic's error.type and message,
// OpenAI's error.code); a refused connection is refused at connect; clearing
// the fault serves the same URL again.
func TestFaultsAnswerAsTheProviderDoes(t *testing.T) {
	cs, err := claude.Start(claude.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := openai.Start(openai.Options{})
	if err != nil {
		t.Fatal(err)
	}
	prompt := `{"model":"m","stream":true,"tools":[{"name":"t"}],"messages":[{"role":"user","content":"hi"}],"input":[{"type":"message","role":"user","content":"hi"}]}`
	for _, c := range []struct {
		s     faulty
		path  string
		fault standinkit.Fault
		code  int
		word  string // in the error body
	}{
		{cs, "/v1/messages", standinkit.FaultAuth, 401, `"message":"invalid x-api-key","type":"authentication_error"`},
		{cs, "/v1/messages", standinkit.FaultBilling, 400, "Your credit balance is too low to access the Anthropic API."},
		{cs, "/v1/messages", standinkit.FaultRateLimit, 429, `"rate_limit_error"`},
		{cs, "/v1/messages", standinkit.FaultServer, 500, `"api_error"`},
		{cs, "/v1/messages", standinkit.FaultUnavailable, 503, `"api_error"`},
		{cs, "/v1/messages", standinkit.FaultOverloaded, 529, `"overloaded_error"`},
		{ops, "/v1/responses", standinkit.FaultAuth, 401, `"code":"invalid_api_key"`},
		{ops, "/v1/responses", standinkit.FaultBilling, 429, `"code":"insufficient_quota"`},
		{ops, "/v1/responses", standinkit.FaultRateLimit, 429, `"code":"rate_limit_exceeded"`},
		{ops, "/v1/responses", standinkit.FaultServer, 500, `"server_error"`},
		{ops, "/v1/responses", standinkit.FaultUnavailable, 503, `"server_error"`},
	} {
		if err := c.s.SetFault(c.fault); err != nil {
			t.Fatal(err)
		}
		res, err := http.Post(c.s.URL()+c.path, "application/json", strings.NewReader(prompt))
		if err != nil {
			t.Fatalf("%s %s: %v", c.path, c.fault, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.code || !json.Valid(b) || !strings.Contains(string(b), c.word) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.path, c.fault, res.StatusCode, b, c.code, c.word)
		}
	}
	for _, s := range []faulty{cs, ops} {
		if err := s.SetFault(standinkit.FaultRefused); err != nil {
			t.Fatal(err)
		}
		if _, err := http.Get(s.URL() + "/v1"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s while refused: %v, want connection refused", s.URL(), err)
		}
		if err := s.SetFault(standinkit.FaultNone); err != nil {
			t.Fatal(err)
		}
		path := "/v1/messages"
		if s == faulty(ops) {
			path = "/v1/responses"
		}
		res, err := http.Post(s.URL()+path, "application/json", strings.NewReader(prompt))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s after the fault cleared: %v %v", s.URL(), res, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		s.Close()
	}
}
