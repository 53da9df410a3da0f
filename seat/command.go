package seat

import (
	"fmt"
	"strings"
	"unicode"
)

// Command is an adapter-authored harness command from the adapter's allow-list:
// the command door. It is a different type from Submission, built by a different
// function from different input, so no board text can become one.
type Command struct {
	name string
	args string
}

// Name is the command without its sigil ("compact").
func (c Command) Name() string { return c.name }

// Args is the command's single-line argument text.
func (c Command) Args() string { return c.args }

// Text is what is typed into the pane: "/name args".
func (c Command) Text() string {
	if c.args == "" {
		return "/" + c.name
	}
	return "/" + c.name + " " + c.args
}

// NewCommand builds a command the adapter allows, or refuses. Arguments are one
// line of printable text: a newline would submit a second input.
func NewCommand(a Adapter, name, args string) (Command, error) {
	name = strings.TrimPrefix(name, "/")
	allowed := false
	for _, n := range a.Commands() {
		allowed = allowed || n == name
	}
	if !allowed {
		return Command{}, fmt.Errorf("%w: command %q is not in the %s adapter's allow-list (%s)",
			ErrBadInput, "/"+name, a.Name(), "/"+strings.Join(a.Commands(), ", /"))
	}
	if len(args) > 4096 {
		return Command{}, fmt.Errorf("%w: command arguments are %d bytes (at most 4096)", ErrBadInput, len(args))
	}
	for i, r := range args {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) && r != ' ' {
			return Command{}, fmt.Errorf("%w: command arguments: unprintable character %U at byte %d", ErrBadInput, r, i)
		}
	}
	return Command{name: name, args: strings.TrimSpace(args)}, nil
}
