package seat

import "fmt"

// nameGrammar is the seat-name grammar. It excludes '.', because tmux rewrites '.' in
// session names, and every character a path or a tmux target could read specially.
const nameGrammar = `[a-z0-9][a-z0-9_-]{0,62}`

// matchesName reports whether name is the whole of nameGrammar. It is a loop, not a
// regexp: every pantty process that names a seat (each hook, each send) checks one,
// and compiling the {0,62} repetition cost more than the rest of a hook's start
// (docs/performance.md, "Process start").
func matchesName(name string) bool {
	if len(name) < 1 || len(name) > 63 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidateName refuses a seat name that could escape the seats directory or be
// rewritten by tmux; the error says which rule it broke so a person can fix it.
func ValidateName(name string) error { return ValidateNameOf("seat", name) }

// ValidateNameOf checks a name against the seat-name grammar, saying kind in
// the error ("seat", "host"): a fleet's host names follow seat names' rules, so
// `HOST:SEAT` is one token a shell, a path and a tmux target all read plainly.
func ValidateNameOf(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: %s name is empty", ErrBadInput, kind)
	case len(name) > 63:
		return fmt.Errorf("%w: %s name is %d characters long (at most 63)", ErrBadInput, kind, len(name))
	case !matchesName(name):
		return fmt.Errorf("%w: %s name %q must match "+nameGrammar+" (lower-case letters, digits, '_' and '-')", ErrBadInput, kind, name)
	}
	return nil
}
