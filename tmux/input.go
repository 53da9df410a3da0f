package tmux

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// Paste delivers text to a pane the way a terminal delivers a paste: via a
// uniquely named tmux buffer (so concurrent pastes cannot mix), with -p so
// tmux wraps it in bracketed-paste markers (ESC[200~ ... ESC[201~) when,
// and only when, the program in the pane has enabled bracketed paste, and
// -d so the buffer is deleted afterwards. Loading and pasting happen in one
// tmux invocation with the text on stdin (never on the command line).
//
// As a terminal does, tmux turns each LF in text into CR. Empty text is a
// no-op.
func (c *Client) Paste(ctx context.Context, paneID string, text []byte) error {
	return c.paste(ctx, paneID, text, true)
}

// PasteRaw is Paste without -p: the text is typed into the pane with no
// bracketed-paste markers even if the program asked for them. It exists
// only as the deliberately failing control of pantty's dispatch
// measurement (showing what goes wrong without bracketing); do not use it
// to deliver prompts.
func (c *Client) PasteRaw(ctx context.Context, paneID string, text []byte) error {
	return c.paste(ctx, paneID, text, false)
}

// paste implements Paste and PasteRaw.
func (c *Client) paste(ctx context.Context, paneID string, text []byte, bracketed bool) error {
	name, err := bufferName()
	if err != nil {
		return err
	}
	paste := []string{"paste-buffer"}
	if bracketed {
		paste = append(paste, "-p")
	}
	paste = append(paste, "-d", "-b", name, "-t", paneID)
	args := append([]string{"load-buffer", "-b", name, "-", ";"}, paste...)
	if err := checkPane(paneID, args); err != nil {
		return err
	}
	if len(text) == 0 {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	_, err = c.run(ctx, text, args...)
	if err != nil && !errors.Is(err, ErrNoServer) && !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
		// load-buffer may have succeeded before paste-buffer failed (e.g.
		// the pane vanished); do not leave the text behind in the server.
		_, _ = c.run(ctx, nil, "delete-buffer", "-b", name)
	}
	return err
}

// bufferName returns a buffer name no other paste can be using.
func bufferName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "pantty-" + hex.EncodeToString(b[:]), nil
}

// SendKeys sends named keys (Enter, Escape, C-u, ...) to a pane, as if
// typed. Keys are never sent with -l; a word tmux does not know as a key
// name is typed as its characters, so pass only real key names.
func (c *Client) SendKeys(ctx context.Context, paneID string, keys ...string) error {
	args := append([]string{"send-keys", "-t", paneID, "--"}, argv(keys)...)
	if err := checkPane(paneID, args); err != nil {
		return err
	}
	if len(keys) == 0 {
		return invalid("no keys given", args)
	}
	for _, k := range keys {
		if k == "" {
			return invalid("empty key name", args)
		}
	}
	_, err := c.run(ctx, nil, args...)
	return err
}

// SendLiteral types text into a pane with send-keys -l, character by
// character and without bracketed paste. It exists only as a baseline for
// benchmarks against Paste. Empty text is a no-op.
func (c *Client) SendLiteral(ctx context.Context, paneID string, text string) error {
	args := []string{"send-keys", "-l", "-t", paneID, "--", arg(text)}
	if err := checkPane(paneID, args); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	_, err := c.run(ctx, nil, args...)
	return err
}

// CaptureWithHistory returns the pane's visible screen plus up to history
// lines of its scrollback, wrapped lines joined. A dead pane needs it: when a
// pane dies under remain-on-exit, tmux 3.3a writes its "Pane is dead" line at
// the bottom with a linefeed that scrolls the screen, so a short error printed
// at the top (a harness that failed at launch) is already in the scrollback.
func (c *Client) CaptureWithHistory(ctx context.Context, paneID string, history int) (string, error) {
	args := []string{"capture-pane", "-p", "-J", "-S", fmt.Sprintf("-%d", history), "-t", paneID}
	if err := checkPane(paneID, args); err != nil {
		return "", err
	}
	return c.run(ctx, nil, args...)
}

// Capture returns the visible screen of a pane as text, wrapped lines
// joined (-J), so a caller can look for what a program printed.
func (c *Client) Capture(ctx context.Context, paneID string) (string, error) {
	args := []string{"capture-pane", "-p", "-J", "-t", paneID}
	if err := checkPane(paneID, args); err != nil {
		return "", err
	}
	return c.run(ctx, nil, args...)
}
