package config

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidProviderIsTheGrammar checks the hand-written matcher against the
// grammar it stands for, as a regexp anchored at both ends: every string of up to
// two bytes from an alphabet with each class's edges and neighbours, and the
// lengths around the 63-byte limit.
func TestValidProviderIsTheGrammar(t *testing.T) {
	re := regexp.MustCompile(`^` + providerGrammar + `$`)
	alphabet := []string{"a", "z", "0", "9", "_", "-", ".", "/", "A", "Z", "`", "{", "@", "[", ":", " ", "\n", "\x00", "\xff", "é"}
	cases := []string{""}
	for _, a := range alphabet {
		cases = append(cases, a)
		for _, b := range alphabet {
			cases = append(cases, a+b, "x"+a+b, a+b+"x")
		}
	}
	for _, n := range []int{62, 63, 64, 65} {
		cases = append(cases, strings.Repeat("a", n), "a"+strings.Repeat(".", n-1), strings.Repeat("a", n-1)+"\n")
	}
	for _, c := range cases {
		if got, want := ValidProvider(c), re.MatchString(c); got != want {
			t.Errorf("ValidProvider(%q) = %v, the grammar says %v", c, got, want)
		}
	}
}
