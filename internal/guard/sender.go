package guard

import (
	"strings"
	"unicode"
)

// IsReservedSender reports whether from names pantty itself once folded:
// format characters (Unicode Cf, variation selectors and the other characters
// Claude Code strips, see invisible) and whitespace removed, fullwidth forms
// mapped to ASCII, case folded. A person reads "Pantty", "ＰＡＮＴＴＹ" and
// "pan\u200btty" as pantty, so the board door must too: the sender in the
// header is how the seat's model tells pantty's own prompts from board text.
// The metadata grammar is ASCII today, which makes the case fold the part that
// matters there; the rest keeps the check right if the grammar ever widens.
func IsReservedSender(from string) bool {
	return foldSender(from) == ReservedSender
}

// foldSender is the normalisation IsReservedSender compares after (the
// standard library has no NFKC; this covers the look-alikes that matter for a
// short ASCII name).
func foldSender(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case invisible(r), unicode.IsSpace(r), isMentionSpace(r):
			continue
		case 0xff01 <= r && r <= 0xff5e: // fullwidth ASCII forms
			r -= 0xfee0
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
