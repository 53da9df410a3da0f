package flight

import (
	"context"
)

// Transport is how keys reach one harness session. Every operation is one
// action on the harness, bounded by ctx; none waits for the harness to react
// (that is Await's, and the caller's evidence timers').
type Transport interface {
	// Screen is what the harness shows where it takes input, as text.
	Screen(ctx context.Context) (string, error)
	// Clear empties the input box (pantty's own leftover only: see Fill).
	Clear(ctx context.Context) error
	// Put places text in the input box without submitting it (a
	// bracketed paste on a pane: newlines stay part of the text).
	Put(ctx context.Context, text string) error
	// Enter submits what the input box holds.
	Enter(ctx context.Context) error
	// Interrupt asks the harness to stop the turn it runs (Escape).
	Interrupt(ctx context.Context) error
}

// Keys is what Pane needs of a tmux client: tmux.Client has it, and the
// driver's transcripts script it without a server.
type Keys interface {
	Capture(ctx context.Context, paneID string) (string, error)
	SendKeys(ctx context.Context, paneID string, keys ...string) error
	Paste(ctx context.Context, paneID string, text []byte) error
}

// Pane is the transport of a harness in a tmux pane: the screen is the
// pane's capture, the text a bracketed paste from a uniquely named buffer,
// and the other operations one key each. It is the only place pantty
// pastes into a harness's pane.
type Pane struct {
	Keys Keys   // the seat's tmux server
	ID   string // the pane's id (%N): exact, never a name tmux could match loosely
}

// Screen captures the pane.
func (p Pane) Screen(ctx context.Context) (string, error) { return p.Keys.Capture(ctx, p.ID) }

// Clear sends C-u, the key Claude Code, Codex CLI, Gemini CLI and the
// simulator all read as "clear the line".
func (p Pane) Clear(ctx context.Context) error { return p.Keys.SendKeys(ctx, p.ID, "C-u") }

// Put pastes text, bracketed.
func (p Pane) Put(ctx context.Context, text string) error {
	return p.Keys.Paste(ctx, p.ID, []byte(text))
}

// Enter sends Enter as a key of its own.
func (p Pane) Enter(ctx context.Context) error { return p.Keys.SendKeys(ctx, p.ID, "Enter") }

// Interrupt sends Escape, which every harness pantty drives reads as "stop
// the running turn".
func (p Pane) Interrupt(ctx context.Context) error { return p.Keys.SendKeys(ctx, p.ID, "Escape") }

// Follow is the pane's change events, when Keys has them (tmux.Conn's
// control client); ok false otherwise (a plain client: Await looks instead).
func (p Pane) Follow(ctx context.Context) (changed <-chan struct{}, release func(), ok bool) {
	if c, is := p.Keys.(Changes); is {
		return c.Follow(ctx)
	}
	return nil, func() {}, false
}
