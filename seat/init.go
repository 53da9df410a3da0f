package seat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// InitConfig writes the commented seat.toml template (config.Template: every key
// with its comment and default) for a new seat and validates it. It never
// replaces an existing seat.toml (that file is the person's).
func InitConfig(s state.Seat, harness, workdir string, env map[string]string) error {
	abs, err := filepath.Abs(workdir)
	if err != nil {
		return fmt.Errorf("%w: workdir %q: %v", state.ErrBadInput, workdir, err)
	}
	set := map[string]string{"name": fmt.Sprintf("%q", s.Name), "harness": fmt.Sprintf("%q", harness),
		"workdir": fmt.Sprintf("%q", abs), "shape": fmt.Sprintf("%q", config.ShapeResident)}
	if len(env) > 0 {
		set["env"] = config.InlineTable(env)
	}
	text := config.Template(s.Name, set, state.HarnessNames())
	// Validate before creating anything, so a bad flag (exit 2) leaves nothing
	// behind: not even the seat's empty directories.
	var c config.Config
	if err := fsatomic.DecodeStrict(s.ConfigPath(), []byte(text), &c); err != nil {
		return fmt.Errorf("%w: %v", state.ErrBadInput, err)
	}
	if err := c.Validate(s.Name, state.HarnessNames()); err != nil {
		return fmt.Errorf("%w: %v", state.ErrBadInput, err)
	}
	if err := state.WorkdirApart(s, c.Workdir); err != nil {
		return fmt.Errorf("%w: %v", state.ErrBadInput, err)
	}
	if err := os.MkdirAll(s.Dir, fsatomic.DirMode); err != nil {
		return err
	}
	if err := s.Ensure(); err != nil {
		return err
	}
	if err := fsatomic.LinkNew(s.TmpDir(), s.ConfigPath(), []byte(text)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s already exists (edit it, or remove it first)", state.ErrBadInput, s.ConfigPath())
		}
		return err
	}
	return nil
}
