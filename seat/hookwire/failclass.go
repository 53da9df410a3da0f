package hookwire

import (
	"strings"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
)

// The failure classes of a turn the harness ended on an error (StopFailure)
// are machine.Class: that one type is what ClassifyFailure returns, what
// machine.AfterFailure decides on and what the records store (heartbeat.toml's
// fault, recover's class), so a class is declared in one place
// (internal/machine/failure.go) and this file only says which of the harness's
// words mean it.

// failRule is one row of the classifier's table: a StopFailure error value,
// optionally narrowed by words in the harness's message, and what it means.
type failRule struct {
	err   string   // the StopFailure error value ("" matches any)
	words []string // any of these in the message (lower case; none: any message)
	class machine.Class
	cause string // the cause in words, before the harness's own message
}

// failRules is the table, first match wins. The error values are Claude Code
// 2.1.328's StopFailure `error` as measured against the stand-in
// (docs/claude-code.md); Codex's PostModelRequest errors are mapped onto the
// same values by codex.ClassifyError. Claude reports a refused connection as
// server_error, so the words decide that one.
var failRules = []failRule{
	{err: "authentication_failed", class: machine.ClassMeans, cause: "cannot authenticate"},
	{err: "connection_failed", class: machine.ClassMeans, cause: "cannot connect"},
	{err: "server_error", words: connectionWords, class: machine.ClassMeans, cause: "cannot connect"},
	{err: "billing_error", class: machine.ClassProvider, cause: "billing"},
	{err: "rate_limit", class: machine.ClassProvider, cause: "rate limit"},
	{err: "rate_limit_error", class: machine.ClassProvider, cause: "rate limit"},
	{err: "usage_limit", class: machine.ClassProvider, cause: "usage limit"},
	{err: "server_error", class: machine.ClassTransient, cause: "server error"},
	{err: "overloaded", class: machine.ClassTransient, cause: "overloaded"},
	{err: "overloaded_error", class: machine.ClassTransient, cause: "overloaded"},
	// A harness retrying a request inside the turn without naming the
	// error (Gemini CLI 0.61.0 retries a 429 and a 5xx alike and tells its
	// hooks neither): transient, the class whose wait is the seat's own. A
	// provider refusal would hold every seat on the provider on a guess; if
	// the retries run out, the turn's end carries the real error and is
	// classified by it.
	{err: ErrProviderRetrying, class: machine.ClassTransient, cause: "provider retrying"},
}

// ErrProviderRetrying is the error value of a RequestFailed event for an
// attempt the harness retries without saying what failed (Gemini CLI's
// BeforeModel hook firing again within one model step).
const ErrProviderRetrying = "provider_retrying"

// connectionWords are how Claude Code words a connection that never reached
// the API (measured: "API Error: Connection refused — … (ECONNREFUSED)"; at
// start-up "Failed to connect to api.anthropic.com: ENOTFOUND").
var connectionWords = []string{"econnrefused", "enotfound", "connection refused", "unable to connect",
	"failed to connect", "etimedout", "eai_again"}

// ClassifyFailure maps a failed turn's error value and the harness's message
// to a failure class and the cause in words ("cannot authenticate: Invalid API
// key · Fix external API key"). Unknown errors are work failures.
func ClassifyFailure(errName, message string) (class machine.Class, cause string) {
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
	return machine.ClassWork, errName + ": " + state.Cut(fsatomic.OneLine(message), 300)
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
