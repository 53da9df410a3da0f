package guard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is one board message as accepted by the board door (`pantty seat send`).
// Everything in it was written by someone on the board, so nothing in it is trusted:
// the metadata is validated against a closed grammar (never escaped, because it is
// printed in the header, the position the model reads as pantty's own voice), and
// the text only ever reaches a pane inside a Submission built by Guard.
type Message struct {
	ID, From, Board, Channel string // metadata: validated, never escaped
	Text                     string
	// Resubmit is 0 normally and 1 when pantty resubmits a message whose turn was lost
	// in a crash; it is shown in the header so the seat can tell a repeat from new work.
	Resubmit int
}

// ErrBadInput is wrapped by every refusal of ValidateMessage and of Guard's message
// checks, so callers can tell "this message can never be sent" (exit 2, nothing
// changed) from a failure of the machinery with one errors.Is.
var ErrBadInput = errors.New("bad input")

// DefaultMaxMessageBytes bounds one message's text. It is also the guard's own
// ceiling: a seat may lower the limit at its door, never raise it past what Guard
// accepts, or a message would be admitted by `send` and refused later in the driver.
const DefaultMaxMessageBytes = 256 << 10

// ReservedSender is the sender of the prompts pantty writes itself (the probe, a
// handoff refresh, a step's start). The board door refuses it so that no board
// message can borrow pantty's identity in the header; Guard accepts it because those
// prompts are guarded and evidence-bound like any message.
const ReservedSender = "pantty"

// The metadata grammars. They are written as explicit byte classes rather than
// regexp shorthands (whose Unicode coverage differs between languages), and they
// exclude space, '=', quotes and every non-ASCII character, so a value can neither
// add a field to the header nor change how it reads.
const (
	idMaxLen    = 128
	idExtra     = "._:-"
	idGrammar   = "[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
	nameMaxLen  = 64
	nameExtra   = "._-"
	nameGrammar = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
)

// ValidateMessage is the board door's check: it refuses, with one line naming the
// field and what is wrong, every message that Guard would refuse, plus the reserved
// sender and text over maxBytes, so a bad message is refused when it is sent (exit 2)
// instead of failing later in the driver. maxBytes <= 0 or above
// DefaultMaxMessageBytes means DefaultMaxMessageBytes, the guard's ceiling.
//
// Refused: invalid UTF-8 or NUL in any field; an ID outside
// [A-Za-z0-9][A-Za-z0-9._:-]{0,127}; a From, Board or Channel that is non-empty and
// outside [A-Za-z0-9][A-Za-z0-9._-]{0,63}; a From that IsReservedSender; Resubmit other
// than 0 or 1; empty or all-whitespace text; text over the limit; and in the text any
// C0 control byte except LF, TAB and CR (CR is normalized to LF), DEL, a C1 control
// (U+0080–U+009F), and the separators U+2028 and U+2029. Every error wraps ErrBadInput.
func ValidateMessage(m Message, maxBytes int) error {
	if err := checkMessageMeta(m); err != nil {
		return err
	}
	if IsReservedSender(m.From) {
		return fmt.Errorf("%w: message from: %q is reserved for prompts pantty writes itself (matched ignoring case, width and invisible characters)", ErrBadInput, ReservedSender)
	}
	if maxBytes <= 0 || maxBytes > DefaultMaxMessageBytes {
		maxBytes = DefaultMaxMessageBytes
	}
	return checkMessageText(m.Text, maxBytes)
}

// ValidID reports whether id is a valid message id. Other code (the inbox, the
// cursor, `seat retry ID`) uses it to refuse an id before it becomes a file name or
// a header field, with the same grammar the guard enforces.
func ValidID(id string) bool { return tokenProblem(id, idMaxLen, idExtra) == "" }

// validMetaName reports whether s is a valid From, Board or Channel value.
func validMetaName(s string) bool { return tokenProblem(s, nameMaxLen, nameExtra) == "" }

// NewMessageID returns "<UTC yyyymmddThhmmss>-<8 random hex>" for a message sent
// without an id: sortable by time for a person reading the inbox, and random enough
// that two senders in the same second do not collide (a collision would make the
// second message a duplicate of the first, and the inbox stores an id once).
func NewMessageID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:]) // crypto/rand.Read never returns an error (it aborts instead)
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// checkMessageMeta validates the metadata fields the guard prints in the header.
// Shared by ValidateMessage and Guard so that the door and the guard cannot drift.
func checkMessageMeta(m Message) error {
	if p := tokenProblem(m.ID, idMaxLen, idExtra); p != "" {
		return fmt.Errorf("%w: message id: %s; want %s", ErrBadInput, p, idGrammar)
	}
	for _, f := range []struct{ name, value string }{
		{"from", m.From}, {"board", m.Board}, {"channel", m.Channel},
	} {
		if f.value == "" {
			continue // optional: an empty field is left out of the header
		}
		if p := tokenProblem(f.value, nameMaxLen, nameExtra); p != "" {
			return fmt.Errorf("%w: message %s: %s; want %s", ErrBadInput, f.name, p, nameGrammar)
		}
	}
	if m.Resubmit != 0 && m.Resubmit != 1 {
		return fmt.Errorf("%w: message resubmit: %d, want 0 or 1", ErrBadInput, m.Resubmit)
	}
	return nil
}

// tokenProblem checks v against [A-Za-z0-9][A-Za-z0-9<extra>]{0,max-1} and returns
// what is wrong with it ("" when it is valid), naming the first offending byte.
func tokenProblem(v string, max int, extra string) string {
	if v == "" {
		return "empty"
	}
	if !utf8.ValidString(v) {
		for i := 0; i < len(v); {
			r, size := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && size == 1 {
				return fmt.Sprintf("invalid UTF-8 at byte %d", i)
			}
			i += size
		}
	}
	if len(v) > max {
		return fmt.Sprintf("%d bytes long (at most %d)", len(v), max)
	}
	for i, r := range v {
		alnum := r < utf8.RuneSelf && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		if alnum || i > 0 && r < utf8.RuneSelf && strings.IndexByte(extra, byte(r)) >= 0 {
			continue
		}
		if i == 0 {
			return fmt.Sprintf("starts with %q (U+%04X); it must start with a letter or digit", r, r)
		}
		return fmt.Sprintf("character %q (U+%04X) at byte %d is not allowed", r, r, i)
	}
	return ""
}

// checkMessageText refuses text that cannot be pasted safely or that is not a
// message at all. Offsets are byte offsets into the text as sent (before CR
// normalization), so a person can find the byte in their own input.
func checkMessageText(text string, maxBytes int) error {
	if len(text) > maxBytes {
		return fmt.Errorf("%w: message text: %d bytes, over the limit of %d", ErrBadInput, len(text), maxBytes)
	}
	if p := textProblem(text); p != "" {
		return fmt.Errorf("%w: message text: %s", ErrBadInput, p)
	}
	if strings.TrimSpace(text) == "" {
		if text == "" {
			return fmt.Errorf("%w: message text: empty", ErrBadInput)
		}
		return fmt.Errorf("%w: message text: only whitespace", ErrBadInput)
	}
	return nil
}

// textProblem names the first byte of text the guard refuses, or returns "".
//
// Refused, and why:
//   - ESC and every other C0 control but LF, TAB and CR: the pane is a terminal, and
//     ESC alone is enough to end bracketed paste early (ESC[201~), after which the
//     rest of the text is typed keys and a later line can dispatch;
//   - NUL: C strings and tmux buffers stop at it, so what is pasted is not what was sent;
//   - DEL (0x7f): a key (backspace) to the composer, not text;
//   - C1 controls U+0080–U+009F: 8-bit forms of ESC sequences (U+009B is CSI) that
//     some terminals and parsers honour;
//   - U+2028 and U+2029: line terminators to JavaScript (Claude Code is a JavaScript
//     program), so they would start a line that pantty's LF-based checks (delimiters,
//     MatchHeader) do not see, and could draw a fake header line;
//   - invalid UTF-8: terminals and the harness repair it differently, so the model
//     would not see the bytes pantty checked.
//
// CR is allowed here because Guard normalizes CRLF and lone CR to LF.
func textProblem(text string) string {
	for i := 0; i < len(text); {
		b := text[i]
		if b < utf8.RuneSelf {
			switch {
			case b == 0:
				return fmt.Sprintf("NUL byte at byte %d", i)
			case b == '\n' || b == '\t' || b == '\r':
			case b < 0x20 || b == 0x7f:
				return fmt.Sprintf("control byte 0x%02x (%s) at byte %d", b, controlName(rune(b)), i)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("invalid UTF-8 at byte %d", i)
		case r >= 0x80 && r <= 0x9f:
			return fmt.Sprintf("C1 control U+%04X (%s) at byte %d", r, controlName(r), i)
		case r == 0x2028:
			return fmt.Sprintf("line separator U+2028 at byte %d", i)
		case r == 0x2029:
			return fmt.Sprintf("paragraph separator U+2029 at byte %d", i)
		}
		i += size
	}
	return ""
}

// controlNames are the standard abbreviations of the C0 (0x00–0x1f) and C1
// (0x80–0x9f) controls, so an error says "ESC", which a person recognizes, not only a number.
var controlNames = [...]string{
	"NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
	"DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
	"PAD", "HOP", "BPH", "NBH", "IND", "NEL", "SSA", "ESA", "HTS", "HTJ", "VTS", "PLD", "PLU", "RI", "SS2", "SS3",
	"DCS", "PU1", "PU2", "STS", "CCH", "MW", "SPA", "EPA", "SOS", "SGCI", "SCI", "CSI", "ST", "OSC", "PM", "APC",
}

// controlName returns the abbreviation of a C0 or C1 control, or DEL.
func controlName(r rune) string {
	switch {
	case r < 0x20:
		return controlNames[r]
	case r == 0x7f:
		return "DEL"
	case r >= 0x80 && r <= 0x9f:
		return controlNames[r-0x80+0x20]
	}
	return "?"
}
