// Package termtext makes text from outside pantty safe to print on a
// terminal. A listing shows board text, model replies and harness error words;
// printed raw, an escape sequence in them could move the cursor, rewrite what
// is on screen or the window title, and a bidi control could reorder a line so
// it reads as something else. Every control character and every bidi control
// is shown as a visible escape instead; JSON output is exact and never passes
// through here.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line escapes s for one cell or one line of a listing: newlines and tabs are
// shown as \n and \t too.
func Line(s string) string { return escape(s, false) }

// Block escapes s for a body printed over several lines (a message, a reply):
// newlines and tabs stay, every other control is escaped.
func Block(s string) string { return escape(s, true) }

// Cut escapes s as Line does and keeps at most n runes of the result, marking
// a cut with "…"; it never splits a character or an escape.
func Cut(s string, n int) string {
	e := Line(s)
	if utf8.RuneCountInString(e) <= n {
		return e
	}
	var b strings.Builder
	used := 0
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		unit := Line(s[i : i+size])
		if used+utf8.RuneCountInString(unit) > n {
			break
		}
		b.WriteString(unit)
		used += utf8.RuneCountInString(unit)
		i += size
	}
	return b.String() + "…"
}

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && !keepLines:
			b.WriteString(`\n`)
		case r == '\t' && !keepLines:
			b.WriteString(`\t`)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0 || bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s needs no escaping (the common case, no allocation).
func clean(s string, keepLines bool) bool {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			return false
		case (r == '\n' || r == '\t') && keepLines:
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || bidi(r):
			return false
		}
	}
	return true
}

// bidi reports the Unicode bidirectional controls: embeddings and overrides
// (U+202A–U+202E), isolates (U+2066–U+2069) and the marks (U+200E, U+200F,
// U+061C).
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}
