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
