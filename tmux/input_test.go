package tmux_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// reader starts a session whose program puts the tty in raw mode,
// optionally enables bracketed paste, prints READY, then records exactly n
// input bytes into a file. It returns the pane and the file path.
func reader(t *testing.T, c *tmux.Client, name string, bracketed bool, n int) (tmux.Pane, string) {
	t.Helper()
	out := filepath.Join(tmuxtest.Dir(t), "in")
	enable := ""
	if bracketed {
		enable = `\033[?2004h`
	}
	script := "stty raw -echo; printf '" + enable + "READY'; head -c " + strconv.Itoa(n) + " > " +
		tmux.ShellQuote(out+".tmp") + " && mv " + tmux.ShellQuote(out+".tmp") + " " + tmux.ShellQuote(out) + "; exec sleep 60"
	p := newSession(t, c, tmux.NewSessionOpts{Name: name, Argv: []string{"sh", "-c", script}})
	// READY is printed after the mode switch, so once it is on screen tmux
	// has already seen ESC[?2004h.
	waitScreen(t, c, p.ID, "READY")
	return p, out
}

func TestPaste(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	text := "hello\nworld; $x 'q' \"dq\" \\;"
	typed := strings.ReplaceAll(text, "\n", "\r") // tmux, like a terminal, pastes LF as CR
	const open, closing = "\x1b[200~", "\x1b[201~"

	tests := []struct {
		name      string
		bracketed bool // the program enabled bracketed paste
		raw       bool // use PasteRaw
		want      string
	}{
		{name: "bracketed", bracketed: true, want: open + typed + closing},
		{name: "plain", bracketed: false, want: typed},
		{name: "raw-control", bracketed: true, raw: true, want: typed},
	}
	for _, tc := range tests {
		p, out := reader(t, c, tc.name, tc.bracketed, len(tc.want))
		paste := c.Paste
		if tc.raw {
			paste = c.PasteRaw
		}
		if err := paste(ctx, p.ID, []byte(text)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := string(waitFile(t, out)); got != tc.want {
			t.Errorf("%s: program received %q, want %q", tc.name, got, tc.want)
		}
	}
	if bufs := rawTmux(t, c, "list-buffers"); bufs != "" {
		t.Errorf("buffers left behind after paste: %q", bufs)
	}

	// A vanished pane is ErrNoTarget and leaves no buffer behind.
	mustKind(t, c.Paste(ctx, "%999", []byte("x")), tmux.ErrNoTarget, "Paste into %999")
	if bufs := rawTmux(t, c, "list-buffers"); bufs != "" {
		t.Errorf("buffer left behind after failed paste: %q", bufs)
	}
}

func TestSendKeysAndLiteral(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	ctx := ctxFor(t)
	p, out := reader(t, c, "keys", false, 3)
	if err := c.SendKeys(ctx, p.ID, "Escape", "Enter", "C-u"); err != nil {
		t.Fatal(err)
	}
	if got := string(waitFile(t, out)); got != "\x1b\r\x15" {
		t.Errorf("SendKeys delivered %q, want ESC CR ^U", got)
	}

	lit := "-l Enter;"
	p2, out2 := reader(t, c, "literal", true, len(lit))
	if err := c.SendLiteral(ctx, p2.ID, lit); err != nil {
		t.Fatal(err)
	}
	if got := string(waitFile(t, out2)); got != lit {
		t.Errorf("SendLiteral delivered %q, want %q (no paste markers, no key names)", got, lit)
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Server(t)
	p := newSession(t, c, tmux.NewSessionOpts{Name: "cap", Width: 20, Height: 5,
		Argv: []string{"sh", "-c", "printf 'first line\\n0123456789abcdefghijKLMN\\n'; exec sleep 60"}})
	// The 24-character line wraps on a 20-column pane; -J joins it back.
	waitScreen(t, c, p.ID, "0123456789abcdefghijKLMN")
	s, err := c.Capture(ctxFor(t), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "first line\n") {
		t.Errorf("Capture = %q, want it to start with the first line", s)
	}
	if unjoined := rawTmux(t, c, "capture-pane", "-p", "-t", p.ID); strings.Contains(unjoined, "KLMN") &&
		strings.Contains(unjoined, "0123456789abcdefghijKLMN") {
		t.Errorf("control failed: the line did not wrap: %q", unjoined)
	}
}
