package hookwire_test

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/hookwire"
)

// The classifier's table against the StopFailure values Claude Code 2.1.328
// gave for each stand-in fault (CLAUDE_CODE_MAX_RETRIES=0, docs/claude-code.md):
// an outage of the means or of the provider never classifies as work, and the
// cause keeps the harness's own words.
func TestClassifyFailure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ err, msg, class, cause string }{
		{"authentication_failed", "Invalid API key · Fix external API key", hookwire.FailMeans, "cannot authenticate: Invalid API key · Fix external API key"},
		{"server_error", "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", hookwire.FailMeans, "cannot connect: API Error: Connection refused"},
		{"server_error", "Unable to connect to Anthropic services\nFailed to connect to api.anthropic.com: ENOTFOUND", hookwire.FailMeans, "cannot connect: Unable to connect to Anthropic services"},
		{"billing_error", "Credit balance is too low", hookwire.FailProvider, "billing: Credit balance is too low"},
		{"rate_limit", "API Error: Request rejected (429) · resets 3:45pm", hookwire.FailProvider, "rate limit: API Error: Request rejected (429)"},
		{"usage_limit", "Claude usage limit reached", hookwire.FailProvider, "usage limit: "},
		{"server_error", "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment.", hookwire.FailTransient, "server error: API Error: 500"},
		{"server_error", "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.", hookwire.FailTransient, "server error: API Error: 529 Overloaded"},
		{"overloaded", "API Error: Overloaded (529)", hookwire.FailTransient, "overloaded: "},
		{"invalid_request", "API Error: 400 prompt is too long", hookwire.FailWork, "invalid_request: API Error: 400 prompt is too long"},
		{"", "something else", hookwire.FailWork, ": something else"},
	} {
		class, cause := hookwire.ClassifyFailure(c.err, c.msg)
		if class != c.class || !strings.HasPrefix(cause, c.cause) {
			t.Errorf("%s %q: %s %q, want %s %q…", c.err, c.msg, class, cause, c.class, c.cause)
		}
	}
}
