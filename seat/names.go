package seat

import (
	"fmt"
	"regexp"
)

// nameRE is the seat-name grammar. It excludes '.', because tmux rewrites '.' in
// session names, and every character a path or a tmux target could read specially.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// ValidateName refuses a seat name that could escape the seats directory or be
// rewritten by tmux; the error says which rule it broke so a person can fix it.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: seat name is empty", ErrBadInput)
	case len(name) > 63:
		return fmt.Errorf("%w: seat name is %d characters long (at most 63)", ErrBadInput, len(name))
	case !nameRE.MatchString(name):
		return fmt.Errorf("%w: seat name %q must match [a-z0-9][a-z0-9_-]{0,62} (lower-case letters, digits, '_' and '-')", ErrBadInput, name)
	}
	return nil
}
