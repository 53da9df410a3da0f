package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
)

// DefaultHome resolves the state root: $PANTTY_HOME, else
// ${XDG_STATE_HOME:-$HOME/.local/state}/pantty. The result is absolute so that a
// path recorded for cron or a hook means the same thing from any directory.
func DefaultHome() (string, error) {
	if h := os.Getenv(config.HomeEnv); h != "" {
		return filepath.Abs(h)
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("cannot find a state directory: set %s or HOME", config.HomeEnv)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Abs(filepath.Join(base, "pantty"))
}

// Seat names one seat's directory and every state file in it. It is a value of
// paths only: creating it reads and writes nothing.
type Seat struct {
	Home string // the state root ($PANTTY_HOME)
	Name string // validated seat name
	Dir  string // Home/seats/Name
	// Box is the seat's inbox (Dir/inbox): its messages and their states,
	// with the inbox's reads and writes as the seat's own methods.
	inbox.Box
}

// Open names a seat after validating its name; it does not require the seat to exist.
func Open(home, name string) (Seat, error) {
	if err := ValidateName(name); err != nil {
		return Seat{}, err
	}
	dir := filepath.Join(home, "seats", name)
	return Seat{Home: home, Name: name, Dir: dir, Box: inbox.Box{Root: filepath.Join(dir, "inbox"), Tmp: filepath.Join(dir, "tmp")}}, nil
}

// Existing opens a seat that must already have a seat.toml; otherwise the error
// wraps ErrUnknownSeat.
func Existing(home, name string) (Seat, error) {
	s, err := Open(home, name)
	if err != nil {
		return s, err
	}
	if _, err := os.Stat(s.ConfigPath()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return s, fmt.Errorf("%w %q (no %s)", ErrUnknownSeat, name, s.ConfigPath())
		}
		return s, fmt.Errorf("seat %q: %w", name, err)
	}
	return s, nil
}

// List returns the names of every seat with a seat.toml under home, sorted.
func List(home string) ([]string, error) {
	ents, err := fsafe.ReadDir(filepath.Join(home, "seats"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() || ValidateName(e.Name()) != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(home, "seats", e.Name(), "seat.toml")); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Paths of the seat's files; docs/state.md describes each.
func (s Seat) path(p ...string) string { return filepath.Join(append([]string{s.Dir}, p...)...) }

func (s Seat) SettingsPath() string { return s.path("harness-settings.json") }
func (s Seat) StatusLinePath() string {
	return s.path("statusline.json")
}
func (s Seat) DriverLogPath() string { return s.path("driver.log") }

// OpenDriverLog opens driver.log for appending (the driver's stdio): a
// symlink or FIFO planted there is refused (fsafe.OpenAppend), so nobody can
// aim the driver's output at another file or hang the start.
func (s Seat) OpenDriverLog() (*os.File, error) {
	f, err := fsafe.OpenAppend(s.DriverLogPath(), fsatomic.FileMode)
	if err != nil {
		return nil, fmt.Errorf("seat %q: driver.log: %w", s.Name, err)
	}
	return f, nil
}
func (s Seat) TmpDir() string     { return s.path("tmp") }
func (s Seat) EventsDir() string  { return s.path("events") }
func (s Seat) SeenDir() string    { return s.path("events", "seen") }
func (s Seat) ControlDir() string { return s.path("control") }
func (s Seat) ControlDoneDir() string {
	return s.path("control", "done")
}
func (s Seat) ArtifactsDir() string { return s.path("artifacts") }
func (s Seat) HandoffDir() string   { return s.path("handoff") }
func (s Seat) HarnessDir() string   { return s.path("harness") }

// Ensure creates the seat's directories, private to the owner.
//
// A directory inside the seat that is a symlink is refused: every writer checks
// its target file, not the parents, so a planted link would aim whole classes of
// writes elsewhere. The seat directory itself may be a link (a layout choice of
// whoever owns the state root).
func (s Seat) Ensure() error {
	for _, d := range []string{s.Dir, s.TmpDir(), s.MsgsDir(), s.StatusDir(), s.ProcessedDir(), s.FailedDir(), s.EventsDir(), s.SeenDir(),
		s.ControlDir(), s.ControlDoneDir(), s.ArtifactsDir(), s.HandoffDir(), s.HarnessDir()} {
		// Checked before MkdirAll, which would follow a link and create there.
		for p := d; p != s.Dir && strings.HasPrefix(p, s.Dir); p = filepath.Dir(p) {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("seat %q: %s is a symlink (refused: state directories must be real directories)", s.Name, p)
			}
		}
		if err := os.MkdirAll(d, fsatomic.DirMode); err != nil {
			return fmt.Errorf("seat %q: %w", s.Name, err)
		}
	}
	return nil
}

// WriteRaw writes bytes atomically (for JSON and text state).
func (s Seat) WriteRaw(path string, data []byte) error {
	return fsatomic.WriteFile(s.TmpDir(), path, data)
}

// CleanTmp removes temp files a crashed writer left behind. It runs at driver
// start; senders and hooks write temp files here without the owner lock, so only
// files older than tmpMaxAge (far longer than any write takes) are removed.
func (s Seat) CleanTmp() {
	ents, _ := os.ReadDir(s.TmpDir())
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > tmpMaxAge {
			os.RemoveAll(filepath.Join(s.TmpDir(), e.Name()))
		}
	}
}

// StateUnwritable probes whether the seat's state can be written now: it
// creates, writes one block to, fsyncs and removes a file in the seat's tmp/
// (where every state write starts). It returns the error a write would meet
// (no space left on device, read-only file system, a quota), or nil.
//
// It is how a reader tells a driver that cannot write from a wedged one: a
// full or read-only state root stops the heartbeat as surely as a stuck
// loop, but killing that driver cures nothing and loses what it holds in
// memory (docs/reliability.md, "Storage faults"). Readers call it only when
// the heartbeat is stale.
func (s Seat) StateUnwritable() error {
	f, err := os.CreateTemp(s.TmpDir(), "probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, 4096))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tmpMaxAge is how old a temp file must be before CleanTmp treats it as left over.
const tmpMaxAge = 10 * time.Minute

// nameGrammar is the seat-name grammar. It excludes '.', because tmux rewrites '.' in
// session names, and every character a path or a tmux target could read specially.
const nameGrammar = `[a-z0-9][a-z0-9_-]{0,62}`

// matchesName reports whether name is the whole of nameGrammar (one matcher
// for every pantty name: config.IsName).
func matchesName(name string) bool { return config.IsName(name, "_-") }

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
