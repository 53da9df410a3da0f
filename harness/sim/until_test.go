package sim

import (
	"fmt"
	"testing"
	"time"
)

// [sim:until=UNIX] scopes a refusal: refused before, processed after (the
// soak's provider-refusal fault is a refusal that ends).
func TestUntilScopesARefusal(t *testing.T) {
	future := time.Now().Add(time.Hour).Unix()
	past := time.Now().Add(-time.Second).Unix()
	for _, c := range []struct {
		prompt string
		refuse bool
	}{
		{fmt.Sprintf("[sim:429 reset=in 1s][sim:until=%d] x", future), true},
		{fmt.Sprintf("[sim:429 reset=in 1s][sim:until=%d] x", past), false},
		{fmt.Sprintf("[sim:overloaded][sim:until=%d] x", past), false},
		{"[sim:429] x", true},
		{fmt.Sprintf("[sim:until=%d] no refusal asked", future), false},
	} {
		if got := parseMarkers(c.prompt).failure != nil; got != c.refuse {
			t.Errorf("%q: refused=%v, want %v", c.prompt, got, c.refuse)
		}
	}
}
