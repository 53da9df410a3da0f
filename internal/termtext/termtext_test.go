package termtext_test

import (
	"testing"

	"github.com/pantty/pantty/internal/termtext"
)

func TestLineAndBlock(t *testing.T) {
	for _, c := range []struct{ in, line, block string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`, `\x1b[2J\x1b]0;title\x07`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`, `evil\u202egnp.exe`},
		{"\u2066iso\u2069 \u200e\u200f\u061c", `\u2066iso\u2069 \u200e\u200f\u061c`, `\u2066iso\u2069 \u200e\u200f\u061c`},
		{"c1\u009b31m del\x7f", `c1\u009b31m del\x7f`, `c1\u009b31m del\x7f`},
		{"bad\xffbyte", `bad\xffbyte`, `bad\xffbyte`},
	} {
		if got := termtext.Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := termtext.Block(c.in); got != c.block {
			t.Errorf("Block(%q) = %q, want %q", c.in, got, c.block)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"ééééé", 3, "ééé…"},
		{"ab\x1bcd", 4, "ab…"}, // never half an escape
		{"abc\ndef", 5, `abc\n…`},
	} {
		if got := termtext.Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
