// Package standin is a loopback stand-in for the OpenAI Responses API, so the
// real Codex CLI can run in pantty's end-to-end tests and measurements with no
// network and no cost: a per-seat CODEX_HOME/config.toml names a model
// provider whose base_url is URL()+"/v1" with wire_api = "responses"
// (codex.PrepareHome writes it).
//
// It answers POST /v1/responses (streaming SSE, or plain JSON) with
// response.created, response.output_item.added, response.content_part.added,
// response.output_text.delta…, response.output_text.done,
// response.content_part.done, response.output_item.done and
// response.completed with usage. Every other path is answered 404 and logged.
// Every request is kept in a log (memory, and a JSONL file when asked) with the
// turn's new user input, the sizes of what was sent, the thread it belongs to
// (prompt_cache_key) and the usage answered, so a test counts exactly-once
// delivery from what reached "the model".
//
// A reply quotes the first line of the new user input (so a guard header and
// its nonce survive into the rollout). Behaviour is scripted per request by
// the markers of harness/standinkit in the new input, or by Queue from Go:
//
//	[standin:slow=5s]          stream the reply over 5s (the client may cancel)
//	[standin:delay=5s]         wait 5s before answering at all
//	[standin:429 reset=30s]    429 rate_limit_exceeded with retry-after
//	[standin:error=500]        that status with an error body
//	[standin:fail]             a 200 stream that ends in response.failed
//	[standin:reply=TEXT]       answer TEXT (to the end of the line) instead of the quote
//	[standin:bash=COMMAND]     answer with an exec_command function call running
//	                           COMMAND (to the end of the line); the request carrying
//	                           its output (kind tool_result) is answered with text
//	[standin:tokens=N]         report N input tokens in this answer's usage
//	[standin:escalate]         the exec_command call asks to run outside the sandbox
//	                           (sandbox_permissions "require_escalated", with a
//	                           justification): Codex asks for an approval first
//	                           unless its approval policy is "never"
//
// SetFault switches an outage on for every model request until it is cleared:
// 401 invalid_api_key, 429 insufficient_quota (billing), 429 rate limit, 500,
// 503, or a refused connection (the listener closed, the same port served again
// when the fault clears). Requests answered by a fault are logged with their
// status.
//
// SetLimits puts the Codex backend's rate-limit headers on every answer
// until cleared (x-codex-{primary,secondary}-used-percent, -window-minutes,
// -reset-at and x-codex-credits-*, the names Codex 0.171.0 parses into the
// app server's account/rateLimits/updated); with Refuse every model request
// is answered 429 usage_limit_reached with the window's resets_at instead.
//
// Usage grows with what was actually sent: tokens are bytes/4 of the request's
// parts; instructions and tools seen before, and the longest input prefix seen
// before, are reported as cached_tokens (input_tokens counts them too, as the
// real API does). Fixed numbers would let any floor/reclaimable split pass.
package standin
