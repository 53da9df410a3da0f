package harness

import (
	"fmt"
	"strings"
)

// Binary is the harness command of this launch: seat.toml's, else the
// adapter's default (a bare name, looked up on the recorded PATH).
func (l Launch) Binary(def string) string {
	if l.Config.Command != "" {
		return l.Config.Command
	}
	return def
}

// SessionArgs are the arguments a harness that takes pantty's session id by
// flag is given: --session-id on a fresh launch, --resume on a resume, then
// seat.toml's model (--model) and permission mode (under permissionFlag).
func (l Launch) SessionArgs(permissionFlag string) []string {
	args := []string{"--session-id", l.SessionID}
	if l.Resume {
		args[0] = "--resume"
	}
	if l.Config.Model != "" {
		args = append(args, "--model", l.Config.Model)
	}
	if l.Config.PermissionMode != "" {
		args = append(args, permissionFlag, l.Config.PermissionMode)
	}
	return args
}

// RefuseOwnArgs refuses seat.toml args that repeat an argument pantty sets
// itself (own, as `--flag`; `--flag=value` counts too), naming what pantty
// sets (sets) in the error.
func RefuseOwnArgs(harness string, args, own []string, sets string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		for _, f := range own {
			if name == f {
				return fmt.Errorf("%s: seat.toml args may not contain %s: pantty sets %s itself", harness, f, sets)
			}
		}
	}
	return nil
}
