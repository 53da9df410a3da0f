package sim

import (
	"path/filepath"
	"strings"
	"time"
)

// A modal dialog in place of the input box, the way Claude Code draws one after
// an upgrade ("Try the new fullscreen renderer?"): it takes every key, and
// Enter answers its highlighted option, which changes the person's settings.
// A driver that pastes into it loses the paste, and a driver that retries
// Enter into it answers a question nobody asked it. The simulator draws one by
// script, so a test can put a dialog on the pane without racing a timing:
// PANTTY_SIM_DIALOG=start shows it at start-up (after SessionStart, in place of
// the box), =before shows it ahead of SessionStart, which fires once it is
// answered (Claude Code's folder-trust question), and a prompt carrying
// [sim:dialog] shows it when its turn ends.
// Every key that reaches the open dialog is written to dialog.jsonl in the
// state directory, so a test counts what a driver sent into it.

// dialogTitle and dialogOptions are what the dialog shows.
const dialogTitle = "Try the new fullscreen renderer?"

var dialogOptions = []string{"Yes, try it", "Not now"}

// dialogMarker in a prompt opens the dialog when that prompt's turn ends.
const dialogMarker = "[sim:dialog]"

// dialogRow is one key the open dialog received: dialog.jsonl.
type dialogRow struct {
	Time   string `json:"time"`
	Key    string `json:"key"`              // enter, paste, text, clear, escape, other
	Text   string `json:"text,omitempty"`   // a text key's or a paste's text
	Answer string `json:"answer,omitempty"` // the option the key chose, when it closed the dialog
}

// keyNames names a key kind in dialog.jsonl.
var keyNames = map[keyKind]string{keyText: "text", keyEnter: "enter", keyNewline: "newline", keyBackspace: "backspace",
	keyClear: "clear", keyInterrupt: "interrupt", keyEOF: "eof", keyEsc: "escape", keyPaste: "paste", keyOther: "other"}

// openDialog draws the dialog over the input box (a draft in the box stays).
func (u *tui) openDialog() {
	u.dialog = true
	u.dialogSel = 0
}

// dialogKey handles a key while the dialog is open: a digit chooses its
// option, Enter the highlighted one, Escape "Not now"; everything else (a
// paste, C-u, text) is eaten. Each key is recorded.
func (u *tui) dialogKey(k key) {
	answer := ""
	switch k.kind {
	case keyEnter:
		answer = dialogOptions[u.dialogSel]
	case keyEsc:
		answer = dialogOptions[1]
	case keyText:
		switch k.text {
		case "1":
			answer = dialogOptions[0]
		case "2":
			answer = dialogOptions[1]
		}
	}
	row := dialogRow{Time: time.Now().UTC().Format(time.RFC3339Nano), Key: keyNames[k.kind], Answer: answer}
	if k.kind == keyText || k.kind == keyPaste {
		row.Text = k.text
	}
	if err := appendJSONLine(filepath.Join(u.e.cfg.stateDir, "dialog.jsonl"), row); err != nil {
		u.addLine("sim: dialog log: " + err.Error())
	}
	if answer != "" {
		u.dialog = false
		u.addLine("  ⎿  " + dialogTitle + " " + answer)
		if u.startAfterDialog {
			u.startAfterDialog = false
			u.render()
			u.e.sessionStartHook(u.e.startSource())
			u.refreshStatus()
		}
		u.drainBacklog()
	}
}

// dialogLines is the dialog as drawn in place of the box, under its rule.
func (u *tui) dialogLines(w int) []string {
	out := []string{rule(w), " " + dialogTitle, ""}
	for i, o := range dialogOptions {
		mark := "  "
		if i == u.dialogSel {
			mark = "❯ "
		}
		out = append(out, " "+mark+string(rune('1'+i))+". "+o)
	}
	return append(out, "", " Enter to confirm · Esc to cancel")
}

// rule is a horizontal rule the width of the screen.
func rule(w int) string { return strings.Repeat("─", w) }
