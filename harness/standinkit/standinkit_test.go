package standinkit

import "testing"

// TestTokensMarker: [standin:tokens=N] sets the reported input tokens; a value
// that is not a positive number is not a marker.
func TestTokensMarker(t *testing.T) {
	for _, c := range []struct {
		text   string
		tokens int
		script string
	}{
		{"edge\n[standin:tokens=248064]", 248064, "tokens=248064"},
		{"[standin:slow=1s tokens=12]", 12, "slow=1s tokens=12"},
		{"[standin:tokens=-5]", 0, ""},
		{"[standin:tokens=lots]", 0, ""},
		{"plain text", 0, ""},
	} {
		rep, script := ParseMarkers(c.text)
		if rep.Tokens != c.tokens || script != c.script {
			t.Errorf("%q: tokens %d, script %q; want %d, %q", c.text, rep.Tokens, script, c.tokens, c.script)
		}
	}
}

// TestLineMarkers: reply= and bash= run to the end of the line, brackets and
// all, also when the line is the text's last.
func TestLineMarkers(t *testing.T) {
	rep, script := ParseMarkers("go\n[standin:bash=echo 'a [b]' > out.txt")
	if rep.Bash != "echo 'a [b]' > out.txt" || script != "bash" {
		t.Errorf("bash marker: %q, %q", rep.Bash, script)
	}
	rep, script = ParseMarkers("[standin:reply=hello [there]]\nmore [standin:slow=1s]")
	if rep.Text != "hello [there]" || rep.Slow.String() != "1s" || script != "reply slow=1s" {
		t.Errorf("reply marker: %+v, %q", rep, script)
	}
}

// read= runs to the end of its line like bash= (a path may hold brackets).
func TestReadMarker(t *testing.T) {
	rep, got := ParseMarkers("read it\n[standin:read=/a/[b]/c.toml\nmore")
	if rep.Read != "/a/[b]/c.toml" || rep.Bash != "" || got != "read" {
		t.Fatalf("read marker: %+v (%q)", rep, got)
	}
}

// escalate marks the bash call as one asking to leave the sandbox; alone it
// is only a flag.
func TestEscalateMarker(t *testing.T) {
	rep, got := ParseMarkers("run it\n[standin:escalate]\n[standin:bash=touch x")
	if !rep.Escalate || rep.Bash != "touch x" || got != "escalate bash" {
		t.Fatalf("escalate with bash: %+v (%q)", rep, got)
	}
	if rep, _ := ParseMarkers("[standin:bash=touch x"); rep.Escalate {
		t.Fatal("a bash marker alone asked to escalate")
	}
}
