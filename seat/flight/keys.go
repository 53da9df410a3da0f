package flight

import (
	"context"
	"fmt"
)

// Fill puts the recorded text into the input box, bracketed; the caller
// sends Enter once the paste has settled. Without a record (the zero Ahead)
// nothing is pasted (ErrUnwritten). It looks first: a dialog or a person's draft
// refuses the fill with ErrNotPasted (nothing reached the harness), and a
// leftover of pantty's own is cleared first (cleared reports that). An empty
// box gets no Clear: a key the harness did not need is one more it could
// misread.
func Fill(ctx context.Context, t Transport, b Box, a Ahead) (cleared bool, err error) {
	if a.text == "" {
		return false, fmt.Errorf("%w: no record was written", ErrUnwritten)
	}
	screen, err := t.Screen(ctx)
	if err != nil {
		return false, err
	}
	switch l := b.Read(screen); {
	case l.Dialog != "":
		return false, fmt.Errorf("%w: %s", ErrNotPasted, DialogHold+l.Dialog)
	case l.Draft != "":
		return false, fmt.Errorf("%w: %s", ErrNotPasted, DraftHold)
	case l.Leftover:
		if err := t.Clear(ctx); err != nil {
			return false, err
		}
		cleared = true
	}
	return cleared, t.Put(ctx, a.text)
}

// Enter submits what the box holds, looking first: a dialog that came up
// since the fill would take the Enter as its answer, so none goes (the
// error wraps ErrBoxNotFree; the text stays in the box under the dialog).
func Enter(ctx context.Context, t Transport, b Box) error {
	screen, err := t.Screen(ctx)
	if err != nil {
		return err
	}
	if why := b.EnterBlocked(screen); why != "" {
		return fmt.Errorf("%w: Enter not sent: %s", ErrBoxNotFree, why)
	}
	return t.Enter(ctx)
}
