// Package driver is the seat's work loop: the one process per seat that holds
// owner.lock, is the only writer to the seat's pane, and moves each inbox
// message only on evidence (hook events, the pane, the harness's transcript).
//
// It reaches the harness one of two ways (way.go): pasting into its TUI in
// the seat's tmux pane, or, for a codex seat with transport = "app-server",
// submitting turns to the seat's own Codex app server, which the driver
// starts and treats as the harness process (appserver.go).
//
// It runs internal/machine's transitions and decisions: one select over hook
// events, inbox and control files (fsnotify), pane watches, process exits and
// timers with stated reasons; nothing it waits for blocks the loop. Everything
// it knows it writes as the seat's records (package seat), which is all any
// reader sees: telemetry, gates, recover and feed never import this package
// (internal/layering checks it), and only the binary's hidden `__drive` verb
// runs it (Run).
package driver
