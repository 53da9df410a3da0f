package seat

import (
	"fmt"
	"regexp"
	"sync"
)

// nameRE is the seat-name grammar. It excludes '.', because tmux rewrites '.' in
// session names, and every character a path or a tmux target could read specially.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`) })

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
	case !nameRE().MatchString(name):
		return fmt.Errorf("%w: %s name %q must match [a-z0-9][a-z0-9_-]{0,62} (lower-case letters, digits, '_' and '-')", ErrBadInput, kind, name)
	}
	return nil
}
