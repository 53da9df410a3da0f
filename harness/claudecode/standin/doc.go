// Package standin is a loopback stand-in for the Anthropic Messages API, so the
// real Claude Code binary can run in pantty's end-to-end tests with no network
// and no cost: point it at URL() with ANTHROPIC_BASE_URL and any ANTHROPIC_API_KEY.
//
// It answers POST /v1/messages (streaming SSE and plain JSON) and
// POST /v1/messages/count_tokens; every other path is answered 404 and logged.
// Every request is kept in a log (memory, and a JSONL file when asked) with the
// turn's new user input, the sizes of what was sent and the usage answered, so a
// test counts exactly-once delivery from what reached "the model".
//
// A reply quotes the first line of the last user text (so a guard header and its
// nonce survive into the transcript). Behaviour is scripted per request by
// markers in the last user text, or by Queue from Go:
//
//	[standin:slow=5s]          stream the reply over 5s (the client may cancel)
//	[standin:delay=5s]         wait 5s before answering at all
//	[standin:429 reset=30s]    429 rate_limit_error with retry-after and reset headers
//	[standin:529]              529 overloaded_error
//	[standin:error=500]        that status with an api_error body
//	[standin:reply=TEXT]       answer TEXT (to the end of the line) instead of the quote
//	[standin:bash=COMMAND]     answer with a Bash tool call running COMMAND (to the end
//	                           of the line); the request carrying its result is
//	                           answered with text, ending the turn
//	[standin:read=PATH]        answer with a Read tool call of PATH (to the end of
//	                           the line), answered like bash=
//	[standin:tokens=N]         report N input tokens (all fresh input) in the usage
//
// The markers are harness/standinkit's, shared with the Codex stand-in.
//
// SetFault switches an outage on for every model request until it is cleared:
// 401 authentication_error, 400 credit balance too low, 429, 500, 503, 529, or
// a refused connection (the listener closed, the same port served again when
// the fault clears). Requests answered by a fault are logged with their status.
//
// Usage grows with what was actually sent: tokens are bytes/4 of the request's
// parts, split like the real API's prompt cache (a system prompt and tools seen
// before and the longest message prefix seen before are cache reads, the last
// message is fresh input, the rest is cache creation). Fixed numbers would let any
// floor/reclaimable split pass a test.
package standin
