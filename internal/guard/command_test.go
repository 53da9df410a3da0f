package guard

import (
	"errors"
	"testing"
)

func TestNewCommandKeepsToTheRules(t *testing.T) {
	r := CommandRules{Harness: "h", Allowed: []string{"compact", "context"}, Bare: []string{"context"}}
	if c, err := NewCommand(r, "/compact", "  keep the plan  "); err != nil || c.Text() != "/compact keep the plan" {
		t.Fatalf("an allowed command: %q %v", c.Text(), err)
	}
	for name, args := range map[string]string{
		"clear":   "",               // not allowed
		"context": "extra",          // bare: no arguments
		"compact": "a\nsecond line", // a newline would submit a second input
	} {
		if _, err := NewCommand(r, name, args); !errors.Is(err, ErrBadInput) {
			t.Errorf("/%s %q: %v, want ErrBadInput", name, args, err)
		}
	}
}
