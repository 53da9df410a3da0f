package guard

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The reference rules below restate the guard's grammar independently (regexps and
// the unicode package instead of the hand-written byte loops), so the fuzzers test
// the implementation against the documented rule, not against itself.
var (
	refIDRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	refNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// refSpace is the JavaScript \s class; a mention is '@' at the start or after it,
	// followed by a character outside it.
	refSpace     = `\t\n\v\f\r \x{00a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`
	refMentionRE = regexp.MustCompile(`(?:^|[` + refSpace + `])@[^` + refSpace + `]`)
	refLineEndRE = regexp.MustCompile(`\r\n?`)
)

// refMentions counts mentions by the documented rule: the harness first drops
// the invisible characters (format characters, variation selectors, the other
// default-ignorable code points, U+FEFF among them although it is also
// JavaScript whitespace), then matches. A match ends on a non-space character,
// so it never consumes the whitespace that precedes the next mention.
func refMentions(content string) int {
	visible := strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return -1
		}
		return r
	}, content)
	return len(refMentionRE.FindAllStringIndex(visible, -1))
}

// refReserved is the reserved-sender rule for names in the metadata grammar
// (ASCII only): pantty in any case.
func refReserved(from string) bool { return strings.EqualFold(from, ReservedSender) }

// refMetaOK is the metadata rule of ValidateMessage, without the reserved sender.
func refMetaOK(m Message) bool {
	if !refIDRE.MatchString(m.ID) || m.Resubmit != 0 && m.Resubmit != 1 {
		return false
	}
	for _, v := range []string{m.From, m.Board, m.Channel} {
		if v != "" && !refNameRE.MatchString(v) {
			return false
		}
	}
	return true
}

// refTextOK is the text rule: valid UTF-8, not blank, within the limit, and no
// control character (unicode.IsControl: C0, DEL, C1) but LF, TAB and CR, and
// neither U+2028 nor U+2029.
func refTextOK(text string, limit int) bool {
	if len(text) > limit || !utf8.ValidString(text) || strings.TrimSpace(text) == "" {
		return false
	}
	return !strings.ContainsFunc(text, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' || r == 0x2028 || r == 0x2029
	})
}

// pasteSafe reports whether out holds only bytes the guard lets through after
// normalization (so not even CR).
func pasteSafe(out string) bool {
	return utf8.ValidString(out) && !strings.ContainsFunc(out, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\t' || r == 0x2028 || r == 0x2029
	})
}

func FuzzGuard(f *testing.F) {
	for _, c := range fuzzSeeds() {
		m := c.msg
		f.Add(m.Text, m.ID, m.From, m.Board, m.Channel, m.Resubmit)
	}
	f.Fuzz(func(t *testing.T, text, id, from, board, channel string, resubmit int) {
		m := Message{ID: id, From: from, Board: board, Channel: channel, Text: text, Resubmit: resubmit}
		s, err := Guard(m, DefaultDispatchFacts)
		valid := refMetaOK(m) && refTextOK(text, DefaultMaxMessageBytes)
		if err != nil {
			if valid || !errors.Is(err, ErrBadInput) || s != (Submission{}) {
				t.Fatalf("refusal %v (valid by the reference rule: %v, submission %+v)", err, valid, s)
			}
			return
		}
		if !valid {
			t.Fatalf("accepted a message the reference rule refuses: %+v", m)
		}
		out := s.Text()
		// (1) the adapter owns the first character.
		if !strings.HasPrefix(out, Prefix) {
			t.Fatalf("output does not start with the prefix: %q", out)
		}
		// (2) nothing the guard refuses survives into the output.
		if !pasteSafe(out) {
			t.Fatalf("output holds a refused byte: %q", out)
		}
		// (3) exactly one begin and one end delimiter line.
		begin, end := "<<<pantty-"+s.Nonce(), "pantty-"+s.Nonce()+">>>"
		var begins, ends int
		for _, line := range strings.Split(out, "\n") {
			switch line {
			case begin:
				begins++
			case end:
				ends++
			}
		}
		if begins != 1 || ends != 1 {
			t.Fatalf("%d begin and %d end delimiter lines in %q", begins, ends, out)
		}
		// (4) between them is exactly the normalized content, and the first line is the header.
		content := refLineEndRE.ReplaceAllString(text, "\n")
		if want := s.Header() + "\n" + begin + "\n" + content + "\n" + end; out != want {
			t.Fatalf("output\n%q\nwant\n%q", out, want)
		}
		if strings.Contains(s.Header(), "\n") || !strings.Contains(s.Header(), " nonce="+s.Nonce()+" ") {
			t.Fatalf("header %q", s.Header())
		}
		// (5) the evidence binding survives what tmux and the harness may do to it.
		for _, prompt := range []string{out, strings.ReplaceAll(out, "\n", "\r\n"), strings.ReplaceAll(out, "\n", "\r"), "\n  " + out + " \t\n"} {
			gotID, gotNonce, gotResubmit, ok := MatchHeader(prompt)
			if !ok || gotID != id || gotNonce != s.Nonce() || gotResubmit != resubmit {
				t.Fatalf("MatchHeader = %q %q %d %v for %q", gotID, gotNonce, gotResubmit, ok, prompt)
			}
		}
		// (6) the mention count matches the reference rule, in the record and the header.
		n := refMentions(content)
		if s.Mentions() != n || !strings.Contains(s.Header(), " mentions="+strconv.Itoa(n)) {
			t.Fatalf("mentions %d, header %q, want %d", s.Mentions(), s.Header(), n)
		}
		// The door admits what the guard admits (except pantty's own sender).
		if !refReserved(from) {
			if err := ValidateMessage(m, 0); err != nil {
				t.Fatalf("the guard accepts what the door refuses: %v", err)
			}
		}
	})
}

func FuzzValidateMessage(f *testing.F) {
	for _, c := range fuzzSeeds() {
		m := c.msg
		f.Add(m.Text, m.ID, m.From, m.Board, m.Channel, m.Resubmit, 0)
		f.Add(m.Text, m.ID, m.From, m.Board, m.Channel, m.Resubmit, len(m.Text)-1)
	}
	f.Fuzz(func(t *testing.T, text, id, from, board, channel string, resubmit, maxBytes int) {
		m := Message{ID: id, From: from, Board: board, Channel: channel, Text: text, Resubmit: resubmit}
		err := ValidateMessage(m, maxBytes)
		limit := maxBytes
		if limit <= 0 || limit > DefaultMaxMessageBytes {
			limit = DefaultMaxMessageBytes
		}
		valid := refMetaOK(m) && !refReserved(from) && refTextOK(text, limit)
		if valid != (err == nil) {
			t.Fatalf("ValidateMessage = %v, reference rule says valid=%v for %+v limit %d", err, valid, m, limit)
		}
		if err == nil {
			if _, gerr := Guard(m, DefaultDispatchFacts); gerr != nil {
				t.Fatalf("the door accepts what the guard refuses: %v", gerr)
			}
			return
		}
		msg := err.Error()
		if !errors.Is(err, ErrBadInput) || !strings.HasPrefix(msg, "bad input: message ") || !pasteSafe(msg) || strings.Contains(msg, "\n") {
			t.Fatalf("refusal is not one clean bad-input line naming the field: %q", msg)
		}
	})
}
