package fsatomic

import (
	"bytes"
	"unicode/utf8"
)

// withoutCommentLines is TOML source with the text of every whole-line comment
// removed, its newline kept, so a parse error keeps its line number. seat.toml
// is mostly comments (144 of its 201 lines: every key with its explanation)
// and BurntSushi/toml lexes a comment rune by rune: decoding it was a quarter
// of `status` over 100 seats. Only what cannot change the decode is removed:
// nothing from a source with a multi-line string (a line inside one may start
// with '#') or with anything the parser may refuse in a comment (a control
// character but tab and CRLF, invalid UTF-8; a NUL is also what the parser
// takes for UTF-16), and not the last line when no newline ends it (an
// unexpected end of file is placed on it). FuzzWithoutCommentLines checks
// that the decode sees no difference. It returns src itself when it removes
// nothing.
func withoutCommentLines(src []byte) []byte {
	if bytes.IndexByte(src, '#') < 0 || !plainSource(src) || bytes.Contains(src, []byte(`"""`)) || bytes.Contains(src, []byte(`'''`)) {
		return src
	}
	var out []byte
	start := 0
	for start < len(src) {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			break // the last line, without its newline, stays
		}
		end += start
		line := src[start:end]
		body := bytes.TrimLeft(line, " \t")
		if len(body) > 0 && body[0] == '#' {
			if out == nil {
				out = append(make([]byte, 0, len(src)), src[:start]...)
			}
			out = append(out, line[:len(line)-len(body)]...)
			if body[len(body)-1] == '\r' {
				out = append(out, '\r')
			}
		} else if out != nil {
			out = append(out, line...)
		}
		if out != nil {
			out = append(out, '\n')
		}
		start = end + 1
	}
	if out == nil {
		return src
	}
	return append(out, src[start:]...)
}

// plainSource reports whether src is valid UTF-8 without control characters
// other than tab, and with every CR followed by a newline.
func plainSource(src []byte) bool {
	for i, b := range src {
		switch {
		case b == '\t' || b == '\n':
		case b == '\r':
			if i+1 == len(src) || src[i+1] != '\n' {
				return false
			}
		case b < 0x20 || b == 0x7f:
			return false
		}
	}
	return utf8.Valid(src)
}
