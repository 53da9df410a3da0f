package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PANTTY_SIM_DIALOG=start: after SessionStart a dialog stands where the box
// would be. A paste, C-u and Enter go into it and are recorded; the Enter
// answers its highlighted option (the harm a driver must never do). A "2"
// typed as a person answers "Not now", the box comes back, and only then does
// a paste reach the model.
func TestDialogEatsKeysAndRecordsThem(t *testing.T) {
	t.Parallel()
	e := newSimEnv(t)
	e.env["PANTTY_SIM_DIALOG"] = "start"
	p := e.start()
	e.waitHooks("SessionStart", 1)
	p.waitScreen("the dialog", func(s string) bool { return strings.Contains(s, dialogTitle) })
	if _, ok := inputBox(p.capture()); ok {
		t.Fatalf("the dialog screen reads as an input box:\n%s", p.capture())
	}
	if (Adapter{}).InputReady(p.capture()) {
		t.Fatal("InputReady on the dialog screen")
	}
	p.paste("[pantty] msg=x nonce=y")
	p.keys("C-u")
	p.keys("Enter")
	log := filepath.Join(e.state, "dialog.jsonl")
	// The dialog records a key as it takes it, a moment after tmux sent it:
	// wait for n rows (or the deadline) before judging them.
	rowsOf := func(n int) (rows []map[string]any) {
		for end := time.Now().Add(deadline); len(rows) < n && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(log); err == nil {
				rows = readJSONL(t, log)
			}
		}
		return rows
	}
	rows := rowsOf(3)
	if len(rows) != 3 || str(rows[0], "key") != "paste" || str(rows[1], "key") != "clear" ||
		str(rows[2], "key") != "enter" || str(rows[2], "answer") != dialogOptions[0] {
		t.Fatalf("dialog.jsonl: %v", rows)
	}
	e.noHook("UserPromptSubmit", 0, 200*time.Millisecond)
	if _, err := os.Stat(filepath.Join(e.state, "requests.jsonl")); err == nil {
		t.Fatal("the paste into the dialog reached the model")
	}
	p.waitBox("")
	// [sim:dialog] opens it again after its turn; a person's "2" closes it.
	p.submit("one [sim:dialog]")
	e.waitHooks("Stop", 1)
	p.waitScreen("the dialog again", func(s string) bool { return strings.Contains(s, dialogTitle) })
	p.keys("2")
	p.waitBox("")
	if rows = rowsOf(4); len(rows) != 4 || str(rows[3], "text") != "2" || str(rows[3], "answer") != dialogOptions[1] {
		t.Fatalf("dialog.jsonl after a person's 2: %v", rows)
	}
	p.submit("two")
	if ups := e.waitHooks("UserPromptSubmit", 2); str(ups[1], "prompt") != "two" {
		t.Fatalf("prompt after the dialog: %q", str(ups[1], "prompt"))
	}
}

// TestATallBoxIsStillTheBox: a pasted text taller than the box shows its
// last lines under a count of the hidden ones, the "> " line out of sight.
// That is the input box, not a dialog: read as one, a long board message's
// paste was held before its Enter and never submitted.
func TestATallBoxIsStillTheBox(t *testing.T) {
	box := boxLines(strings.Repeat("a long message ", 400), 80)
	screen := strings.Join(append(append([]string{"✻ pantty sim", "", rule(80)}, box...), rule(80), "  footer"), "\n")
	if !strings.HasPrefix(box[0], hiddenLines) {
		t.Fatalf("a tall text's box starts %q, want the hidden-lines count", box[0])
	}
	if !(Adapter{}).InputReady(screen) {
		t.Fatalf("InputReady is false on a tall box:\n%s", screen)
	}
	if _, ok := (Adapter{}).Composer(screen); !ok {
		t.Fatalf("Composer finds no box:\n%s", screen)
	}
}
