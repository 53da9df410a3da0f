package flight

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/state"
)

// Box reads a harness's input box from its screen, with the adapter's own
// readers (harness.Capabilities.Composer and InputReady, the adapter's
// Busy). A pane shows other things where the harness takes keys — a dialog
// after an upgrade, a login or trust question, an update notice — and those
// take a paste and an Enter as their answers: Claude Code's "Try the new
// fullscreen renderer?" took a board message's Enter retries as "Yes, try
// it" and changed the person's settings. Text in the box that pantty did
// not put there is a person's draft. Box tells the two apart from an empty
// box and from pantty's own leftover.
type Box struct {
	Busy       func(screen string) bool           // a turn runs
	Composer   func(screen string) (string, bool) // the box's text; false: no box on the screen. nil: the adapter cannot read its box, which then counts as free
	InputReady func(screen string) bool           // nil: a box Composer finds takes keys
	// Own reports whether text in the box is pantty's own (its prefix
	// first, or a command the driver left there): only that is cleared.
	Own func(text string) bool
}

// Look is what a screen shows where the harness takes keys.
type Look struct {
	Busy     bool   // a turn runs (the adapter's Busy)
	Dialog   string // no input box the adapter recognises: what stands there instead, one line
	Draft    string // text in the box that pantty did not put there
	Leftover bool   // the box holds pantty's own text: Clear may empty it
}

// Free reports whether keys may go into the box now: not busy, a box, empty
// or holding only pantty's leftover.
func (l Look) Free() bool { return !l.Busy && l.Dialog == "" && l.Draft == "" }

// Hold texts, as the heartbeat's waiting and the logs show them.
const (
	BlankScreen = "(a blank screen)" // no box and no words: a harness starting or redrawing
	DialogHold  = "blocked: the harness shows a dialog: "
	DraftHold   = "held: a draft in the input box"
)

// ErrBoxNotFree is a paste or a key not sent because the screen showed no
// free input box at that moment (a dialog, a person's draft).
var ErrBoxNotFree = errors.New("the input box is not free")

// ErrNotPasted is a Fill that put nothing in the box: nothing reached the
// harness, so the text may simply wait and go again.
var ErrNotPasted = fmt.Errorf("%w: not pasted", ErrBoxNotFree)

// Read classifies a screen.
func (b Box) Read(screen string) Look {
	if b.Busy != nil && b.Busy(screen) {
		return Look{Busy: true}
	}
	if b.Composer == nil {
		return Look{}
	}
	text, ok := b.Composer(screen)
	if !ok || b.InputReady != nil && !b.InputReady(screen) {
		return Look{Dialog: DialogWords(screen)}
	}
	switch text = strings.TrimSpace(text); {
	case text == "":
		return Look{}
	case b.Own != nil && b.Own(text):
		return Look{Leftover: true}
	}
	return Look{Draft: text}
}

// EnterBlocked says why Enter may not go onto screen, or "" when it may:
// never onto a screen without the input box (it would answer the dialog).
func (b Box) EnterBlocked(screen string) string {
	if l := b.Read(screen); l.Dialog != "" {
		return DialogHold + l.Dialog
	}
	return ""
}

// Shows reports whether the box holds text (the paste has been taken in),
// or, for an adapter that cannot read its box, true.
func (b Box) Shows(screen string) bool {
	if b.Composer == nil {
		return true
	}
	text, ok := b.Composer(screen)
	return ok && strings.TrimSpace(text) != ""
}

// dialogLines is how many of a dialog's lines its one-line description keeps,
// and dialogWidth how long that line may be.
const (
	dialogLines = 3
	dialogWidth = 160
)

// DialogWords describes what stands where the input box should be: its first
// non-empty lines, one line, cut, credentials redacted. Dialogs draw their own
// top rule (Claude Code's trust and upgrade dialogs, the simulator's), so
// that is what the lines below the screen's last rule are; with no rule, the
// screen's last lines.
func DialogWords(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	from := max(0, len(lines)-2*dialogLines)
	for i := len(lines) - 1; i >= 0; i-- {
		if panetext.IsRule(lines[i]) {
			if i < len(lines)-1 {
				from = i + 1
			}
			break
		}
	}
	var words []string
	for _, l := range lines[from:] {
		if t := strings.TrimSpace(l); t != "" {
			words = append(words, t)
			if len(words) == dialogLines {
				break
			}
		}
	}
	if len(words) == 0 {
		return BlankScreen
	}
	return Clip(state.Redact(strings.Join(words, " / ")), dialogWidth)
}

// Clip cuts s to n runes, marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
