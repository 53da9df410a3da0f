package sim

import (
	"reflect"
	"testing"
	"time"
)

func drain(d *decoder, flush bool) []key {
	var out []key
	for {
		k, ok := d.next(flush)
		if !ok {
			return out
		}
		out = append(out, k)
	}
}

func TestDecoderPasteAcrossChunks(t *testing.T) {
	var d decoder
	d.feed([]byte("ab\x1b[20"))
	if got := drain(&d, false); !reflect.DeepEqual(got, []key{{keyText, "ab"}}) {
		t.Fatalf("first chunk: %v", got)
	}
	if !d.waiting() {
		t.Fatal("an incomplete sequence must be held")
	}
	d.feed([]byte("0~one\rtwo\x1b[20"))
	if got := drain(&d, false); len(got) != 0 {
		t.Fatalf("mid-paste: %v", got)
	}
	d.feed([]byte("1~\r"))
	want := []key{{keyPaste, "one\ntwo"}, {kind: keyEnter}}
	if got := drain(&d, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestDecoderEscape(t *testing.T) {
	var d decoder
	d.feed([]byte("\x1b"))
	if got := drain(&d, false); len(got) != 0 {
		t.Fatalf("a lone ESC must wait for the timer: %v", got)
	}
	if got := drain(&d, true); !reflect.DeepEqual(got, []key{{kind: keyEsc}}) {
		t.Fatalf("flush: %v", got)
	}
	d.feed([]byte("\x1b[A\x1bOB\x1b\x1bx"))
	want := []key{{keyOther, "\x1b[A"}, {keyOther, "\x1bOB"}, {kind: keyEsc}, {kind: keyEsc}, {keyText, "x"}}
	if got := drain(&d, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	d.feed([]byte("a\x7f\x15\x03\x04\n\t"))
	kinds := []keyKind{}
	for _, k := range drain(&d, false) {
		kinds = append(kinds, k.kind)
	}
	if want := []keyKind{keyText, keyBackspace, keyClear, keyInterrupt, keyEOF, keyNewline, keyOther}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v want %v", kinds, want)
	}
}

func TestDecoderLineDiscipline(t *testing.T) {
	d := decoder{lfIsEnter: true}
	d.feed([]byte("one\r\ntwo\n"))
	want := []key{{keyText, "one"}, {kind: keyEnter}, {keyText, "two"}, {kind: keyEnter}}
	if got := drain(&d, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestMarkersAndTokens(t *testing.T) {
	m := parseMarkers("x [sim:slow=2s] [sim:429 reset=at 5pm]")
	if !m.hasSlow || m.slow != 2*time.Second || m.failure == nil || m.failure.code != "rate_limit" ||
		m.failure.message != "API Error: Request rejected (429) · resets at 5pm" {
		t.Fatalf("markers: %+v %+v", m, m.failure)
	}
	if m := parseMarkers("[sim:overloaded][sim:hang][sim:crash]"); m.failure.code != "overloaded" || !m.hang || !m.crash {
		t.Fatalf("markers: %+v", m)
	}
	if swallowCount("a [sim:swallow-enter=3]") != 3 || swallowCount("none") != 0 {
		t.Fatal("swallowCount")
	}
	if tokens("") != 0 || tokens("abcd") != 1 || tokens("abcde") != 2 {
		t.Fatal("tokens")
	}
	if got := replyFor("héllo\nrest"); got != "sim: received 10 chars\n> héllo" {
		t.Fatalf("reply %q", got)
	}
	if !matcherAccepts("", "x") || !matcherAccepts("startup|resume", "resume") || matcherAccepts("compact", "clear") {
		t.Fatal("matcher")
	}
}
