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
	if args = strings.TrimSpace(args); args != "" && bare(a, name) {
		return Command{}, fmt.Errorf("%w: the %s harness's /%s takes no arguments (text after it turns the line into a prompt for the model)",
			ErrBadInput, a.Name(), name)
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

// BareCommands is an optional Adapter method: the allow-listed commands that
// take no arguments in this harness. Text after one of them is not an argument
// there: the whole line becomes a prompt for the model (measured on Codex
// 0.171.0: "/compact keep X" reached the model as a turn and compacted
// nothing), so NewCommand refuses arguments for them.
type BareCommands interface {
	BareCommands() []string
}

// bare reports whether the adapter's command name takes no arguments.
func bare(a Adapter, name string) bool {
	b, ok := a.(BareCommands)
	if !ok {
		return false
	}
	for _, n := range b.BareCommands() {
		if n == name {
			return true
		}
	}
	return false
}
