package hookwire

import (
	"strings"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
)

// Failure classes of a turn the harness ended on an error (StopFailure). They
// decide what happens to the message, so an outage of the seat's means (a bad
// key, no network) or of its provider never fails board work: only an error
// about the message itself does.
const (
	// FailMeans: the harness cannot reach or use the model at all (credentials,
	// login, connection). The message stays queued, the driver re-probes with
	// backoff, the seat reports itself dead (class means) and the ladder may
	// descend.
	FailMeans = string(machine.ClassMeans)
	// FailProvider: the provider refuses this account for now (rate limit,
	// usage limit, credit balance). A wait shared by every seat on the
	// provider (providers.toml), re-probed.
	FailProvider = string(machine.ClassProvider)
	// FailTransient: the provider failed this request after the harness's own
	// retries (5xx, overloaded). The message goes back to the queue with a
	// per-seat backoff.
	FailTransient = string(machine.ClassTransient)
	// FailWork: anything else — an error about the message itself. The message
	// fails (work-error).
	FailWork = string(machine.ClassWork)
)

// failRule is one row of the classifier's table: a StopFailure error value,
// optionally narrowed by words in the harness's message, and what it means.
type failRule struct {
	err   string   // the StopFailure error value ("" matches any)
	words []string // any of these in the message (lower case; none: any message)
	class string
	cause string // the cause in words, before the harness's own message
}

// failRules is the table, first match wins. The error values are Claude Code
// 2.1.328's StopFailure `error` as measured against the stand-in
// (docs/claude-code.md); Codex's PostModelRequest errors are mapped onto the
// same values by codex.ClassifyError. Claude reports a refused connection as
// server_error, so the words decide that one.
var failRules = []failRule{
	{err: "authentication_failed", class: FailMeans, cause: "cannot authenticate"},
	{err: "connection_failed", class: FailMeans, cause: "cannot connect"},
	{err: "server_error", words: connectionWords, class: FailMeans, cause: "cannot connect"},
	{err: "billing_error", class: FailProvider, cause: "billing"},
	{err: "rate_limit", class: FailProvider, cause: "rate limit"},
	{err: "rate_limit_error", class: FailProvider, cause: "rate limit"},
	{err: "usage_limit", class: FailProvider, cause: "usage limit"},
	{err: "server_error", class: FailTransient, cause: "server error"},
	{err: "overloaded", class: FailTransient, cause: "overloaded"},
	{err: "overloaded_error", class: FailTransient, cause: "overloaded"},
}

// connectionWords are how Claude Code words a connection that never reached
// the API (measured: "API Error: Connection refused — … (ECONNREFUSED)"; at
// start-up "Failed to connect to api.anthropic.com: ENOTFOUND").
var connectionWords = []string{"econnrefused", "enotfound", "connection refused", "unable to connect",
	"failed to connect", "etimedout", "eai_again"}

// ClassifyFailure maps a failed turn's error value and the harness's message
// to a failure class and the cause in words ("cannot authenticate: Invalid API
// key · Fix external API key"). Unknown errors are work failures.
func ClassifyFailure(errName, message string) (class, cause string) {
	name, text := strings.ToLower(errName), strings.ToLower(message)
	for _, r := range failRules {
		if r.err != "" && r.err != name {
			continue
		}
		if len(r.words) > 0 && !containsAny(text, r.words) {
			continue
		}
		return r.class, r.cause + ": " + state.Cut(fsatomic.OneLine(message), 300)
	}
	return FailWork, errName + ": " + state.Cut(fsatomic.OneLine(message), 300)
}

// containsAny reports whether s contains one of words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// ErrorWords is an adapter's table from its harness's own words for a failed
// request to the StopFailure error values ClassifyFailure knows, for a harness
// whose hooks do not name the error themselves (Codex's PostModelRequest text,
// Gemini CLI's API error line). First match wins.
type ErrorWords []struct {
	Words []string // any of these, in lower case, in the message
	Name  string   // the StopFailure error value
}

// Name returns the error value of the first row whose words the message holds
// (compared in lower case), or "api_error": a failure of the turn itself.
func (t ErrorWords) Name(msg string) string {
	m := strings.ToLower(msg)
	for _, e := range t {
		if containsAny(m, e.Words) {
			return e.Name
		}
	}
	return "api_error"
}

// ReasonNoTurn: the harness reported success but no model turn ran (a dispatched
// or rejected input): that is not processing.
const ReasonNoTurn = "no-model-turn"

// Reasons on a message put back in the queue by a failed turn that was not its
// fault (the provider's are ReasonProviderRefusal).
const (
	ReasonMeansFault = "means-fault" // the harness cannot reach or use the model
	ReasonTransient  = "transient"   // the provider failed the request (5xx, overloaded)
	// ReasonTransientExhausted fails a message the provider failed
	// [recovery] transient_attempts times: one request the provider always
	// errors on (or an outage longer than the attempts span) must not hold the
	// queue behind it for ever.
	ReasonTransientExhausted = "transient-exhausted"
)
