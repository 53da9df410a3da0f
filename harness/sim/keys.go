package sim

import (
	"bytes"
	"strings"
)

// keyKind is what a run of input bytes means to the input box.
type keyKind int

const (
	keyText      keyKind = iota // printable characters
	keyEnter                    // CR: submit
	keyNewline                  // LF (Ctrl-J): newline in the box
	keyBackspace                // DEL or BS
	keyClear                    // Ctrl-U: clear the box
	keyInterrupt                // Ctrl-C
	keyEOF                      // Ctrl-D
	keyEsc                      // a lone Escape
	keyPaste                    // the text of a bracketed paste
	keyOther                    // any other control or escape sequence, ignored
)

type key struct {
	kind keyKind
	text string
}

const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// decoder turns terminal input bytes into keys. It holds back an escape
// sequence whose end has not arrived yet: the caller decides, with a timer,
// when a held ESC is a lone Escape (flush).
type decoder struct {
	buf       []byte
	inPaste   bool
	pasteText []byte
	// lfIsEnter makes LF submit like CR, as a line discipline would: input
	// that arrived before the simulator was ready may have been cooked.
	lfIsEnter bool
}

func (d *decoder) feed(b []byte) { d.buf = append(d.buf, b...) }

// waiting reports whether bytes are held for an incomplete escape sequence
// outside a paste (so the caller should arm the Escape timer).
func (d *decoder) waiting() bool { return !d.inPaste && len(d.buf) > 0 && d.buf[0] == 0x1b }

// next returns the next complete key. With flush, a held incomplete escape
// sequence is resolved as a lone Escape followed by its other bytes.
func (d *decoder) next(flush bool) (key, bool) {
	for {
		if d.inPaste {
			i := bytes.Index(d.buf, []byte(pasteEnd))
			if i < 0 {
				keep := partialSuffix(d.buf, pasteEnd)
				d.pasteText = append(d.pasteText, d.buf[:len(d.buf)-keep]...)
				d.buf = d.buf[len(d.buf)-keep:]
				return key{}, false
			}
			d.pasteText = append(d.pasteText, d.buf[:i]...)
			d.buf = d.buf[i+len(pasteEnd):]
			d.inPaste = false
			text := normalizeNewlines(string(d.pasteText))
			d.pasteText = nil
			return key{keyPaste, text}, true
		}
		if len(d.buf) == 0 {
			return key{}, false
		}
		c := d.buf[0]
		switch {
		case c == 0x1b:
			k, n, ok := d.escape(flush)
			if !ok {
				return key{}, false
			}
			d.buf = d.buf[n:]
			if k.kind == keyPaste { // start marker: continue in paste mode
				d.inPaste = true
				continue
			}
			return k, true
		case c == '\r':
			n := 1
			if d.lfIsEnter && len(d.buf) > 1 && d.buf[1] == '\n' {
				n = 2
			}
			d.buf = d.buf[n:]
			return key{kind: keyEnter}, true
		case c == '\n':
			d.buf = d.buf[1:]
			if d.lfIsEnter {
				return key{kind: keyEnter}, true
			}
			return key{kind: keyNewline}, true
		case c == 0x7f || c == 0x08:
			d.buf = d.buf[1:]
			return key{kind: keyBackspace}, true
		case c == 0x15:
			d.buf = d.buf[1:]
			return key{kind: keyClear}, true
		case c == 0x03:
			d.buf = d.buf[1:]
			return key{kind: keyInterrupt}, true
		case c == 0x04:
			d.buf = d.buf[1:]
			return key{kind: keyEOF}, true
		case c < 0x20:
			d.buf = d.buf[1:]
			return key{kind: keyOther}, true
		}
		n := 0
		for n < len(d.buf) && d.buf[n] >= 0x20 && d.buf[n] != 0x7f {
			n++
		}
		text := string(d.buf[:n])
		d.buf = d.buf[n:]
		return key{keyText, text}, true
	}
}

// escape decodes the sequence starting at an ESC. It returns the key, how
// many bytes it used, and false when it needs more bytes to decide. A
// keyPaste result with no text means "paste starts here".
func (d *decoder) escape(flush bool) (key, int, bool) {
	b := d.buf
	lone := func() (key, int, bool) {
		if flush {
			return key{kind: keyEsc}, 1, true
		}
		return key{}, 0, false
	}
	if len(b) == 1 {
		return lone()
	}
	switch b[1] {
	case '[':
		i := 2
		for i < len(b) && b[i] >= 0x30 && b[i] <= 0x3f {
			i++
		}
		for i < len(b) && b[i] >= 0x20 && b[i] <= 0x2f {
			i++
		}
		if i == len(b) {
			return lone()
		}
		if b[i] < 0x40 || b[i] > 0x7e { // malformed: the ESC was alone
			return key{kind: keyEsc}, 1, true
		}
		if string(b[:i+1]) == pasteStart {
			return key{kind: keyPaste}, i + 1, true
		}
		return key{kind: keyOther, text: string(b[:i+1])}, i + 1, true
	case 'O':
		if len(b) < 3 {
			return lone()
		}
		return key{kind: keyOther, text: string(b[:3])}, 3, true
	}
	// ESC followed by anything else: the Escape was a key on its own.
	return key{kind: keyEsc}, 1, true
}

// partialSuffix is the length of the longest suffix of b that is a proper
// prefix of marker, i.e. the bytes that might start the marker.
func partialSuffix(b []byte, marker string) int {
	for n := len(marker) - 1; n > 0; n-- {
		if len(b) >= n && string(b[len(b)-n:]) == marker[:n] {
			return n
		}
	}
	return 0
}

// normalizeNewlines maps CR and CRLF to LF: tmux turns pasted LFs into CRs,
// and Claude keeps pasted line breaks as newlines.
func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
