package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// InitConfig writes a commented seat.toml for a new seat and validates it. It
// never replaces an existing seat.toml (that file is the person's).
func InitConfig(s Seat, harness, workdir string, env map[string]string) error {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return fmt.Errorf("%w: workdir %q: %v", ErrBadInput, workdir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# seat.toml — declared identity and configuration of seat %q.
# Written by 'pantty seat init'; edit it by hand. pantty validates it on every
# start and never rewrites it. Unknown keys are errors (with their line).

name = %q          # must match the directory name
harness = %q       # sim | claude-code
workdir = %q       # absolute; the harness runs here
shape = "resident"  # resident (turn and step are not implemented yet)

# command = ""            # harness binary; empty = the adapter's default
# args = []               # extra arguments for the harness
# model = ""              # passed to the harness; status reports the model the harness records
# permission_mode = ""

# max_message_bytes = 262144   # board messages over this are refused by 'seat send'
# turn_ceiling = "30m"         # a turn running longer is cancelled and its message failed
# heartbeat_interval = "30s"   # the driver's loop beats at this interval
# ready_timeout = "60s"        # how long start waits for the harness's SessionStart
# paste_settle = ""            # quiet time between paste and Enter; empty = the adapter's default
# submit_timeout = "5s"        # wait for UserPromptSubmit evidence before retrying Enter
# submit_retries = 3           # Enter retries before the message fails as undelivered

[tmux]
# socket = "pantty"   # name (like tmux -L) or absolute path; default $PANTTY_TMUX_SOCKET or "pantty"

[env]
# Added to the harness's environment (on top of PATH, HOME, LANG, TERM, ...).
`, s.Name, s.Name, harness, abs)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = %q\n", k, env[k])
	}
	// Validate before creating anything, so a bad flag (exit 2) leaves nothing
	// behind: not even the seat's empty directories.
	var c Config
	if err := DecodeStrict(s.ConfigPath(), []byte(b.String()), &c); err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if err := c.validate(s.Name); err != nil {
		return fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if err := os.MkdirAll(s.Dir, DirMode); err != nil {
		return err
	}
	if err := s.Ensure(); err != nil {
		return err
	}
	if err := LinkNew(s.TmpDir(), s.ConfigPath(), []byte(b.String())); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s already exists (edit it, or remove it first)", ErrBadInput, s.ConfigPath())
		}
		return err
	}
	return nil
}
