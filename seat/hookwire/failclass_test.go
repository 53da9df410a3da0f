package hookwire_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// The classifier's table against the StopFailure values Claude Code 2.1.328
// gave for each stand-in fault (CLAUDE_CODE_MAX_RETRIES=0, docs/claude-code.md):
// an outage of the means or of the provider never classifies as work, and the
// cause keeps the harness's own words.
func TestClassifyFailure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err, msg string
		class    machine.Class
		cause    string
	}{
		{"authentication_failed", "Invalid API key · Fix external API key", machine.ClassMeans, "cannot authenticate: Invalid API key · Fix external API key"},
		{"server_error", "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", machine.ClassMeans, "cannot connect: API Error: Connection refused"},
		{"server_error", "Unable to connect to Anthropic services\nFailed to connect to api.anthropic.com: ENOTFOUND", machine.ClassMeans, "cannot connect: Unable to connect to Anthropic services"},
		{"billing_error", "Credit balance is too low", machine.ClassProvider, "billing: Credit balance is too low"},
		{"rate_limit", "API Error: Request rejected (429) · resets 3:45pm", machine.ClassProvider, "rate limit: API Error: Request rejected (429)"},
		{"usage_limit", "Claude usage limit reached", machine.ClassProvider, "usage limit: "},
		{"server_error", "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment.", machine.ClassTransient, "server error: API Error: 500"},
		{"server_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.", machine.ClassTransient, "server error: API Error: 529 Overloaded"},
		{"overloaded", "API Error: Overloaded (529)", machine.ClassTransient, "overloaded: "},
		// Gemini CLI retrying inside the turn, its error unseen: the seat's own wait, not the provider's.
		{hookwire.ErrProviderRetrying, "attempt 2 of a model request", machine.ClassTransient, "provider retrying: attempt 2"},
		{"invalid_request", "API Error: 400 prompt is too long", machine.ClassWork, "invalid_request: API Error: 400 prompt is too long"},
		{"", "something else", machine.ClassWork, ": something else"},
	} {
		class, cause := hookwire.ClassifyFailure(c.err, c.msg)
		if class != c.class || !strings.HasPrefix(cause, c.cause) {
			t.Errorf("%s %q: %s %q, want %s %q…", c.err, c.msg, class, cause, c.class, c.cause)
		}
	}
}

// A class is stored as its name: the heartbeat's fault is machine.Class, and
// heartbeat.toml says `fault = "means"` as it did when the field was a string,
// so every reader of the file (status, recover, an older pantty) reads it.
func TestAFaultIsStoredAsItsClassName(t *testing.T) {
	t.Parallel()
	s, err := state.Open(filepath.Join(t.TempDir(), "home"), "fc")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	class, cause := hookwire.ClassifyFailure("authentication_failed", "Invalid API key")
	if err := s.HeartbeatFile().Write(state.Heartbeat{Phase: state.PhaseMeans, Fault: class, FaultCause: cause}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.HeartbeatFile().Path())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `fault = "means"`) {
		t.Fatalf("heartbeat.toml does not store the class by its name:\n%s", data)
	}
	if hb, err := s.HeartbeatFile().Read(); err != nil || hb.Fault != machine.ClassMeans {
		t.Fatalf("read back: %+v %v", hb, err)
	}
}
