// Package appserver drives Codex CLI through its own app server instead of
// its TUI's input box: JSON-RPC 2.0 over a WebSocket on a Unix socket
// (`codex app-server --listen unix://PATH`). On this path board text is the
// data of a turn/start request and never meets a composer, so nothing in it
// can dispatch; the turn's acceptance, end, reply, failure and token usage
// arrive as notifications instead of being read from a pane or from hooks.
// Codex marks the protocol experimental: every fact this package relies on
// was measured on the installed version (0.171.0) and is written in
// docs/codex.md, "The app-server path (experimental, measured on 0.171.0)".
//
//   - Conn is one connection: Call (requests with ids), Notify,
//     Notifications (everything the server sends that is not an answer, in
//     order, never blocking the answers), Done/Err (the connection's end: a
//     dead server is an error, not a silence).
//   - Server supervises one seat's app server: Start runs it with the seat's
//     CODEX_HOME on a socket pantty names, returns once it listens, and its
//     process's end is an event (Done); Stop ends its process group.
//   - proto.go holds the requests and notifications pantty uses; Submit takes
//     only a guard.Submission, so the board door cannot start a turn with
//     unguarded text; TurnEnd reads a turn's end (status, reply, error info:
//     a cancel holds only when the status says interrupted) and ContextOf a
//     context reading; limits.go reads account/rateLimits/updated
//     (LimitReached: a window used up, and until when).
//
// The WebSocket client is written here (ws.go) rather than imported: the
// peer is a process pantty started, on a socket only its user can open, and
// the part of RFC 6455 it needs (a handshake, masked text frames out, text
// and control frames in) is some 250 lines tested against the real server;
// a library (github.com/coder/websocket, github.com/gorilla/websocket) would
// be the module's first network dependency for the same frames.
package appserver
