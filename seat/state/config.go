package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/statedir"
	"github.com/pantty/pantty/tmux"
)

var (
	harnessNamesMu sync.Mutex
	harnessNames   []string // in registration order
)

// KnowHarness adds a harness name to those seat.toml's harness key accepts.
// harness.Register calls it for every adapter it registers: seat holds the
// names, the harness package the adapters behind them.
func KnowHarness(name string) {
	harnessNamesMu.Lock()
	defer harnessNamesMu.Unlock()
	if !slices.Contains(harnessNames, name) {
		harnessNames = append(harnessNames, name)
	}
}

// HarnessNames returns the registered harness names in registration order:
// what seat.toml's harness key may name.
func HarnessNames() []string {
	harnessNamesMu.Lock()
	defer harnessNamesMu.Unlock()
	return append([]string(nil), harnessNames...)
}

// LoadConfig reads and validates a seat's seat.toml. Unknown keys and bad values
// are errors naming the file and line; nothing is silently defaulted except the
// documented optional fields.
func (s Seat) LoadConfig() (config.Config, error) {
	path := s.ConfigPath()
	c, err := s.ConfigFile().Read()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return c, fmt.Errorf("%w %q (no %s)", ErrUnknownSeat, s.Name, path)
		}
		return c, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	if err := c.Validate(s.Name, HarnessNames()); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
	}
	if err := WorkdirApart(s, c.Workdir); err != nil {
		return c, fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
	}
	return c, nil
}

// ErrBadConfig marks a seat.toml that does not validate (exit 2: fix the file).
var ErrBadConfig = errors.New("bad seat.toml")

// SocketFor resolves the seat's tmux socket: seat.toml, then $PANTTY_TMUX_SOCKET,
// then "pantty" — always a private server, never the user's default one.
func SocketFor(c config.Config) (string, error) {
	spec := c.Tmux.Socket
	if spec == "" {
		spec = os.Getenv("PANTTY_TMUX_SOCKET")
	}
	if spec == "" {
		spec = "pantty"
	}
	return tmux.SocketPath(spec)
}

// ConfigFile is seat.toml as decoded (strict). The person writes it, never
// pantty once it exists; LoadConfig validates what this reads.
func (s Seat) ConfigFile() statedir.File[config.Config] {
	return bind[config.Config](s, s.ConfigPath())
}

// DropDir is the seat's drop directory: beside $PANTTY_HOME, never inside it,
// because the sandbox hides $PANTTY_HOME from the shell entirely (a read deny
// is a tmpfs over it, measured on Claude Code 2.1.328) and a write grant inside
// a denied tree is void. One directory per seat, so a seat's sandbox is granted
// its own and no other.
func DropDir(s Seat) string { return filepath.Join(dropRoot(s.Home), s.Name) }

// dropRoot is the directory that holds every seat's drop directory.
func dropRoot(home string) string {
	home = filepath.Clean(home)
	return filepath.Join(filepath.Dir(home), "."+filepath.Base(home)+"-drop")
}

// WorkdirApart refuses a workdir that overlaps pantty's state: $PANTTY_HOME or
// the drop root (the parent of every seat's drop directory). A harness's sandbox
// lets the model write its workdir, so a workdir holding the drop root would let
// the seat write every other seat's drop directory (notes and refresh requests
// its driver acts on for that seat), and one holding $PANTTY_HOME every seat's
// state wherever the harness has no deny of its own. A workdir inside either is
// refused too: the model's own files would sit in pantty's. Symlinks are
// resolved on both sides, so a link does not hide the overlap.
func WorkdirApart(s Seat, workdir string) error {
	if workdir == "" {
		return nil // validate reports it missing
	}
	work := resolved(workdir)
	for _, st := range []struct{ what, path string }{
		{"pantty's state root (" + config.HomeEnv + ")", resolved(s.Home)},
		{"the seats' drop directories", resolved(dropRoot(s.Home))},
	} {
		if Within(st.path, work) || Within(work, st.path) {
			return fmt.Errorf("workdir %s overlaps %s %s: the seat's model may write in its workdir, so it could write other seats' files; use a workdir apart from it (or move %s)", workdir, st.what, st.path, config.HomeEnv)
		}
	}
	return nil
}

// resolved is path with its symlinks resolved, as far as it exists: a state
// root not created yet is still compared where it will be.
func resolved(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if p == filepath.Dir(p) {
			return path
		}
		rest = append([]string{filepath.Base(p)}, rest...)
	}
}

// Within reports whether path is dir or below it.
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func (s Seat) ConfigPath() string { return s.path("seat.toml") }
