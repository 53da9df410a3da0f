package guard

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Command is an adapter-authored harness command from the adapter's allow-list:
// the command door. It is a different type from Submission, built by a different
// function from different input, so no board text can become one; its fields
// are unexported, so only NewCommand here can build one.
type Command struct {
	name string
	word string // the harness's own word for name ("" = name)
	args string
}

// Name is the command without its sigil ("compact").
func (c Command) Name() string { return c.name }

// Args is the command's single-line argument text.
func (c Command) Args() string { return c.args }

// Text is what is typed into the pane: "/word args", where word is the
// harness's own word for the command (CommandRules.Words), else its name.
func (c Command) Text() string {
	w := c.name
	if c.word != "" {
		w = c.word
	}
	if c.args == "" {
		return "/" + w
	}
	return "/" + w + " " + c.args
}

// CommandRules is what the command door knows of one harness: its name (for
// the refusal), the commands pantty may send as itself, and which of them take
// no arguments (text after one of those is not an argument there: the whole
// line becomes a prompt for the model — measured on Codex 0.171.0, "/compact
// keep X" reached the model as a turn and compacted nothing).
type CommandRules struct {
	Harness string
	Allowed []string
	Bare    []string
	// Words names an allowed command in the harness's own word when it is
	// not the door's name (Gemini CLI: compact → compress; its /compact is
	// only an alias, which its completion list does not show).
	Words map[string]string
}

// NewCommand builds a command the rules allow, or refuses with ErrBadInput.
// Arguments are one line of printable text: a newline would submit a second
// input.
func NewCommand(r CommandRules, name, args string) (Command, error) {
	name = strings.TrimPrefix(name, "/")
	if !slices.Contains(r.Allowed, name) {
		return Command{}, fmt.Errorf("%w: command %q is not in the %s adapter's allow-list (%s)",
			ErrBadInput, "/"+name, r.Harness, "/"+strings.Join(r.Allowed, ", /"))
	}
	if args = strings.TrimSpace(args); args != "" && slices.Contains(r.Bare, name) {
		return Command{}, fmt.Errorf("%w: the %s harness's /%s takes no arguments (text after it turns the line into a prompt for the model)",
			ErrBadInput, r.Harness, name)
	}
	if len(args) > 4096 {
		return Command{}, fmt.Errorf("%w: command arguments are %d bytes (at most 4096)", ErrBadInput, len(args))
	}
	for i, r := range args {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) && r != ' ' {
			return Command{}, fmt.Errorf("%w: command arguments: unprintable character %U at byte %d", ErrBadInput, r, i)
		}
	}
	return Command{name: name, word: r.Words[name], args: args}, nil
}
