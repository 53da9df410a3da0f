package guard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Prefix is the constant, adapter-owned start of every submission. Dispatch on the
// measured path is decided by the first character of the pasted text (a leading '/'
// ran a slash command, a leading '!' a shell command), so pantty closes that layer by
// owning the first character itself, whatever the message says. It is a constant,
// not "a non-empty header", because a header built from metadata is empty for
// exactly the message whose metadata is empty.
const Prefix = "[pantty] "

// Dispatch forms the guard implements. A form is the shape of the measured dispatch
// predicate; the guard is only correct against a form it was written for.
const (
	// FormFirstChar: the first character of the submitted string dispatches when it
	// is one of the sigils (measured on Claude Code and Codex CLI in tmux).
	FormFirstChar = "first-char"
	// FormNone: nothing submitted on this path dispatches. The guard still owns the
	// first character, so that a change in the harness is not an open door.
	FormNone = "none"
	// FormTrimmedFirstChar: the first character after leading whitespace is
	// tested (measured on Codex CLI 0.171.0 in tmux: a pasted "\n/context" ran
	// the command parser, "text\n/context" did not). The guard's prefix starts
	// with a non-whitespace character, so trimming leaves it first: the same
	// invariant closes it.
	FormTrimmedFirstChar = "trimmed-first-char"
)

// DispatchFacts is the measured dispatch predicate the guard is built against. It is
// an input, not a constant of the guard, because the predicate is a measurement of
// one harness build on one submission path: it ships in the binary and may be
// replaced by a local re-measurement, and the guard must refuse a predicate it does
// not implement rather than assume its own.
type DispatchFacts struct {
	// Form is FormFirstChar or FormNone. Any other form (e.g. "line-start", which a
	// first-character invariant does not close) makes Guard refuse.
	Form string
	// Sigils are the characters that dispatch in that position, e.g. "/!".
	Sigils string
}

// DefaultDispatchFacts is the predicate shipped in the binary until a facts file
// replaces it: the form measured on Claude Code 2.1.328 in tmux 3.3a, where a leading
// '/' and '!' dispatched. '#' (a memory shortcut) and '@' (a file mention) are added
// because they have had a leading meaning in the harness's input box; they were not
// measured to dispatch here, and listing them only makes the prefix check stricter.
var DefaultDispatchFacts = DispatchFacts{Form: FormFirstChar, Sigils: "/!#@"}

// ErrUnsupportedFacts is wrapped when Guard refuses the dispatch facts themselves
// (a form it does not implement, or a sigil set that includes the prefix's first
// character). It is a configuration problem of the seat, not of the message, so
// callers keep the message queued instead of failing it.
var ErrUnsupportedFacts = errors.New("dispatch facts not supported by the guard")

// Submission is board text made safe to paste. Only Guard can make one (its fields
// are unexported), so the type is the proof that a text went through the guard: the
// board door of the driver takes a Submission, never a string. The zero Submission
// has an empty Text and must not be sent.
type Submission struct {
	text, id, nonce, header string
	mentions, resubmit      int
}

// Text returns the exact bytes to paste (no trailing newline: Enter is sent apart).
func (s Submission) Text() string { return s.text }

// ID returns the message id carried in the header, the key the evidence is bound to.
func (s Submission) ID() string { return s.id }

// Nonce returns the random nonce of this submission. It binds a UserPromptSubmit to
// this paste rather than to an earlier paste of the same message or to a person
// typing a look-alike header.
func (s Submission) Nonce() string { return s.nonce }

// Mentions returns the number of '@' mentions in the content (see countMentions for
// the rule). The expansion layer cannot be closed by string rules, so the count is
// recorded with the submission to make it observable.
func (s Submission) Mentions() int { return s.mentions }

// Resubmit returns 1 when this is pantty's one resubmission of a message lost in a crash.
func (s Submission) Resubmit() int { return s.resubmit }

// Header returns the first line of Text, for records and logs.
func (s Submission) Header() string { return s.header }

// newNonce returns 12 random lowercase hex characters (48 bits from crypto/rand): a
// board writer cannot predict the delimiters, so content cannot be written to close
// them. A variable so that tests can force collisions.
var newNonce = func() string {
	var b [6]byte
	rand.Read(b[:]) // crypto/rand.Read never returns an error (it aborts instead)
	return hex.EncodeToString(b[:])
}

// nonceAttempts bounds the retries for a nonce that does not occur in the content.
// With 48 random bits a 256 KiB text collides about once in 10^9 draws, so running
// out means the nonce source is broken, and refusing is the only safe answer.
const nonceAttempts = 8

// nonceLen is the nonce's length in hex digits (48 bits).
const nonceLen = 12

// Guard builds the one form of board text that may reach a pane, or refuses. Its
// output, for facts it implements and a message that passes checkMessageMeta and
// checkMessageText:
//
//	[pantty] msg=<id> nonce=<nonce> [from=<from>] [board=<board>] [channel=<channel>] mentions=<n> [resubmit=1]
//	<<<pantty-<nonce>
//	<content>
//	pantty-<nonce>>>>
//
// where content is the text with CRLF and lone CR turned into LF, and the nonce
// does not occur anywhere in the content (so neither delimiter line can). Guard is
// deterministic except for the nonce. It accepts From == ReservedSender (pantty's own
// prompts); the board door refuses that sender before a message gets here.
func Guard(m Message, f DispatchFacts) (Submission, error) {
	if err := checkFacts(f); err != nil {
		return Submission{}, err
	}
	if err := checkMessageMeta(m); err != nil {
		return Submission{}, err
	}
	if err := checkMessageText(m.Text, DefaultMaxMessageBytes); err != nil {
		return Submission{}, err
	}
	content := normalizeLineEnds(m.Text)
	nonce, err := pickNonce(content)
	if err != nil {
		return Submission{}, err
	}
	mentions := countMentions(content)
	header := buildHeader(m, nonce, mentions)
	begin, end := beginDelimiter(nonce), endDelimiter(nonce)

	var b strings.Builder
	b.Grow(len(header) + len(begin) + len(content) + len(end) + 3)
	b.WriteString(header)
	b.WriteByte('\n')
	b.WriteString(begin)
	b.WriteByte('\n')
	b.WriteString(content)
	b.WriteByte('\n')
	b.WriteString(end)
	return Submission{
		text: b.String(), id: m.ID, nonce: nonce, header: header,
		mentions: mentions, resubmit: m.Resubmit,
	}, nil
}

// checkFacts refuses a predicate the guard was not written against: a guard derived
// from a form nobody measured protects against nothing in particular.
func checkFacts(f DispatchFacts) error {
	switch f.Form {
	case FormFirstChar, FormNone, FormTrimmedFirstChar:
	default:
		return fmt.Errorf("%w: dispatch form %q is not implemented (the guard implements %q, %q and %q)",
			ErrUnsupportedFacts, f.Form, FormFirstChar, FormTrimmedFirstChar, FormNone)
	}
	first, _ := utf8.DecodeRuneInString(Prefix)
	if strings.ContainsRune(f.Sigils, first) {
		return fmt.Errorf("%w: sigil %q is the first character of the guard's prefix %q, so every submission would dispatch",
			ErrUnsupportedFacts, first, Prefix)
	}
	return nil
}

// pickNonce draws nonces until one does not occur in the content. Checking for the
// nonce itself, not only for the delimiter lines, also keeps the content from
// holding a header line or a delimiter with this submission's nonce in any position.
func pickNonce(content string) (string, error) {
	for range nonceAttempts {
		n := newNonce()
		if !validNonce(n) {
			return "", fmt.Errorf("guard: nonce source returned %q, want %d lowercase hex characters", n, nonceLen)
		}
		if !strings.Contains(content, n) {
			return n, nil
		}
	}
	return "", fmt.Errorf("guard: every one of %d nonces occurs in the content; refusing", nonceAttempts)
}

// validNonce reports whether n has the nonce form: exactly 12 lowercase hex digits.
func validNonce(n string) bool {
	if len(n) != nonceLen {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// beginDelimiter and endDelimiter are the lines around the content. The nonce makes
// them unpredictable; the arrows make the direction readable to a person and a model.
func beginDelimiter(nonce string) string { return "<<<pantty-" + nonce }
func endDelimiter(nonce string) string   { return "pantty-" + nonce + ">>>" }

// buildHeader writes the first line. Every value in it has passed checkMessageMeta or
// is pantty's own (nonce, count), and no value can hold a space or '=', so the header
// is unambiguous to MatchHeader and cannot be extended by a field value.
func buildHeader(m Message, nonce string, mentions int) string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString("msg=" + m.ID + " nonce=" + nonce)
	for _, f := range [...]struct{ key, value string }{{"from", m.From}, {"board", m.Board}, {"channel", m.Channel}} {
		if f.value != "" {
			b.WriteString(" " + f.key + "=" + f.value)
		}
	}
	b.WriteString(" mentions=" + strconv.Itoa(mentions))
	if m.Resubmit == 1 {
		b.WriteString(" resubmit=1")
	}
	return b.String()
}

// normalizeLineEnds turns CRLF and lone CR into LF. Guard applies it to content (a
// CR pasted into a terminal is Enter, and it is what MatchHeader must undo anyway);
// MatchHeader applies it to prompts because tmux and the harness may change line ends.
func normalizeLineEnds(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// countMentions counts the '@' mentions in content as the harness will expand
// them. The rule: an '@' counts when it is at the start of the content or right
// after a whitespace character, and the character right after it exists and is not
// whitespace. "Whitespace" is the JavaScript \s class (isMentionSpace), because
// Claude Code, where expansion was measured, is a JavaScript program. Invisible
// characters (see invisible) are transparent: Claude Code strips them and still
// expands the mention (measured on 2.1.328, docs/intake.md "Mentions"), so "\u200b@x" counts 1
// and "a\u200b@x" counts 0, as "@x" and "a@x" do. "look at @secret.txt" counts 1;
// "a@b", "(@x)", "@ x" and a trailing "@" count 0. The header, prefix and
// delimiters hold no '@', so the count of the whole submission equals the count of
// its content.
func countMentions(content string) int {
	n := 0
	afterSpace := true // the start of the content counts as after whitespace
	for i, r := range content {
		if invisible(r) {
			continue // neither a boundary nor a character: the harness removes it
		}
		if r == '@' && afterSpace {
			if next, ok := nextVisible(content[i+1:]); ok && !isMentionSpace(next) {
				n++
			}
		}
		afterSpace = isMentionSpace(r)
	}
	return n
}

// MentionCount is the mention count Guard records for a message text (line ends
// normalized as Guard does), for the listings that show it before and after the
// submission: `seat inbox`, `status`, `watch`.
func MentionCount(text string) int { return countMentions(normalizeLineEnds(text)) }

// nextVisible returns the first character of s that is not invisible.
func nextVisible(s string) (rune, bool) {
	for _, r := range s {
		if !invisible(r) {
			return r, true
		}
	}
	return 0, false
}

// invisible reports whether the harness drops r before it looks for mentions:
// the format characters (category Cf: zero-width space and joiners, bidi marks
// and embeddings, the soft hyphen, U+180E, the word joiner, tag characters), the
// variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF) and the other default-
// ignorable code points (Mongolian free variation selectors, U+034F, Hangul
// fillers). U+FEFF is Cf and also JavaScript whitespace, but Claude Code strips
// it before it looks for mentions ("word\ufeff@x" did not expand, "@\ufeffx"
// did: measured on 2.1.328), so it is invisible, not a boundary. Measured list:
// docs/intake.md (Mentions), TestMentionCountMatchesWhatClaudeExpands.
func invisible(r rune) bool {
	if r == 0xfeff {
		return true
	}
	if r < 0x80 || isMentionSpace(r) {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// isMentionSpace is the JavaScript \s class, written out because shorthand classes
// differ between languages: TAB, LF, VT, FF, CR, space, U+00A0, U+1680,
// U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
func isMentionSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00a0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// MatchHeader finds the guard's header in a prompt as the harness reported it (the
// `prompt` of UserPromptSubmit), so that submission evidence is bound to a
// submission by its id and nonce, never guessed. Before matching it applies the
// documented normalization: CRLF and lone CR become LF, leading and trailing
// whitespace is trimmed (tmux and the harness may do either), and the wrapper
// Claude Code 2.1.328 puts around a bracketed paste of four or more lines (or a
// long one) is removed: a first line `<pasted_content id="X">` and, when present,
// a last line `</pasted_content id="X">` (measured: docs/claude-code.md). It then
// requires:
//
//   - the first line is exactly a header Guard could have built: Prefix, then
//     msg=, nonce=, the optional from=, board=, channel= in that order, mentions=
//     and the optional resubmit=1, single spaces, every value valid, nothing else;
//   - the second line is the begin delimiter with that nonce.
//
// The end delimiter is not required, so a harness that shortens a long prompt in its
// report still yields the evidence. ok is false for any prompt pantty did not build,
// including a header that appears anywhere but the first line.
func MatchHeader(prompt string) (id, nonce string, resubmit int, ok bool) {
	p := unwrapPaste(strings.TrimSpace(normalizeLineEnds(prompt)))
	header, rest, found := strings.Cut(p, "\n")
	if !found {
		return "", "", 0, false
	}
	id, nonce, resubmit, ok = parseHeader(header)
	if !ok {
		return "", "", 0, false
	}
	if begin, _, _ := strings.Cut(rest, "\n"); begin != beginDelimiter(nonce) {
		return "", "", 0, false
	}
	return id, nonce, resubmit, true
}

// pasteOpenRE is the first line of Claude Code's wrapper around a long paste.
var pasteOpenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<pasted_content id="([A-Za-z0-9_-]{1,64})">\n`) })

// unwrapPaste removes Claude Code's <pasted_content> wrapper from a trimmed prompt.
// Only the exact opening line is recognised; the closing line must carry the same
// id. The header must still be the first line inside, so the wrapper opens no
// other position for it.
func unwrapPaste(p string) string {
	m := pasteOpenRE().FindStringSubmatch(p)
	if m == nil {
		return p
	}
	inner := p[len(m[0]):]
	inner = strings.TrimSuffix(inner, "\n</pasted_content id=\""+m[1]+"\">")
	return strings.TrimSpace(inner)
}

// parseHeader is the strict inverse of buildHeader.
func parseHeader(line string) (id, nonce string, resubmit int, ok bool) {
	rest, found := strings.CutPrefix(line, Prefix)
	if !found {
		return "", "", 0, false
	}
	fields := strings.Split(rest, " ")
	i := 0
	take := func(key string) (string, bool) {
		if i < len(fields) {
			if v, ok := strings.CutPrefix(fields[i], key+"="); ok {
				i++
				return v, true
			}
		}
		return "", false
	}
	if id, ok = take("msg"); !ok || !ValidID(id) {
		return "", "", 0, false
	}
	if nonce, ok = take("nonce"); !ok || !validNonce(nonce) {
		return "", "", 0, false
	}
	for _, key := range [...]string{"from", "board", "channel"} {
		if v, ok := take(key); ok && !validMetaName(v) {
			return "", "", 0, false
		}
	}
	count, ok := take("mentions")
	if n, err := strconv.Atoi(count); !ok || err != nil || n < 0 || strconv.Itoa(n) != count {
		return "", "", 0, false
	}
	if v, ok := take("resubmit"); ok {
		if v != "1" {
			return "", "", 0, false
		}
		resubmit = 1
	}
	if i != len(fields) {
		return "", "", 0, false
	}
	return id, nonce, resubmit, true
}
