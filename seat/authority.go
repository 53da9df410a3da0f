package seat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
)

// DropEnv names the seat's drop directory in the harness's environment when
// isolation is on: the one place the sandboxed shell may write for pantty
// (`pantty handoff note`, `pantty handoff request` from inside), read and
// validated by the seat's driver (seat/drop.go).
const DropEnv = "PANTTY_DROP"

// ErrPerSeat is ProbeIsolation's answer without a seat, for a harness whose
// sandbox can be probed only with the seat's own files (Codex's CODEX_HOME).
var ErrPerSeat = errors.New("probed per seat at launch")

// Authority is authority.toml: what the last launch let the seat's model reach,
// written by the driver at each launch so `status` and `gates` report what holds
// rather than what seat.toml asked for.
type Authority struct {
	// Isolation is on, off or unavailable; Why says what decided it.
	Isolation string `toml:"isolation"`
	Mechanism string `toml:"mechanism,omitempty"`
	Why       string `toml:"why"`
	// Protected are the absolute paths the harness's read tools, @-mentions and
	// (isolated) shell are denied: $PANTTY_HOME and the harness's credentials.
	Protected []string `toml:"protected"`
	// Drop is the seat's drop directory when isolation is on.
	Drop string    `toml:"drop,omitempty"`
	At   time.Time `toml:"at"`
}

// On reports whether the OS sandbox was on at the last launch.
func (a Authority) On() bool { return a.Isolation == config.IsolationOn }

// AuthorityPath is authority.toml in the seat's directory.
func (s Seat) AuthorityPath() string { return s.path("authority.toml") }

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

// Sandbox is what a harness brings to the seat's authority: its name, its own
// credential files (denied to the model like $PANTTY_HOME) and, when it has
// an OS sandbox for the model's shell, the probe that checks the sandbox runs
// here for this seat and names it (nil: it has none). harness.ResolveAuthority
// builds it from the adapter's capabilities.
type Sandbox struct {
	Harness string
	Secrets []string
	Probe   func(env map[string]string) (mechanism string, err error)
}

// DecideAuthority decides what the next launch gives the model: isolation as
// seat.toml asks and the harness and OS allow (probed now), the protected paths,
// and the drop directory (created 0700 when isolation is on). With isolation =
// "on" an unavailable sandbox is an error: the seat does not start unisolated.
func DecideAuthority(sb Sandbox, s Seat, c config.Config, env map[string]string, now time.Time) (Authority, error) {
	a := Authority{Protected: []string{filepath.Clean(s.Home)}, At: now.UTC()}
	if err := workdirApart(s, c.Workdir); err != nil { // seat.toml may have changed since the driver loaded it
		return a, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	var secrets []string
	if c.EnvFile != "" { // the file and, when it is a link, what it reaches
		secrets = append(secrets, c.EnvFile)
		if real, err := filepath.EvalSymlinks(c.EnvFile); err == nil {
			secrets = append(secrets, real)
		}
	}
	secrets = append(secrets, sb.Secrets...)
	for _, p := range secrets {
		if p != "" && !within(p, a.Protected[0]) && !slices.Contains(a.Protected, filepath.Clean(p)) {
			a.Protected = append(a.Protected, filepath.Clean(p))
		}
	}
	switch {
	case c.Authority.Isolation == config.IsolationOff:
		a.Isolation, a.Why = config.IsolationOff, "seat.toml [authority] isolation = \"off\""
		return a, nil
	case sb.Probe == nil:
		a.Isolation, a.Why = config.IsolationUnavailable, "harness "+sb.Harness+" has no OS sandbox pantty can use"
	default:
		mech, err := sb.Probe(env)
		if err != nil {
			a.Isolation, a.Why = config.IsolationUnavailable, err.Error()
		} else {
			a.Isolation, a.Mechanism, a.Why = config.IsolationOn, mech, "probed at launch: "+mech+" runs here"
		}
	}
	if a.Isolation != config.IsolationOn {
		if c.Authority.Isolation == config.IsolationOn {
			return a, fmt.Errorf("%w: seat.toml [authority] isolation = \"on\" but %s", ErrBadInput, a.Why)
		}
		return a, nil
	}
	a.Drop = DropDir(s)
	if err := os.MkdirAll(a.Drop, 0o700); err != nil {
		return a, fmt.Errorf("drop directory: %w", err)
	}
	if err := os.Chmod(filepath.Dir(a.Drop), 0o700); err != nil {
		return a, fmt.Errorf("drop directory: %w", err)
	}
	return a, nil
}

// workdirApart refuses a workdir that overlaps pantty's state: $PANTTY_HOME or
// the drop root (the parent of every seat's drop directory). A harness's sandbox
// lets the model write its workdir, so a workdir holding the drop root would let
// the seat write every other seat's drop directory (notes and refresh requests
// its driver acts on for that seat), and one holding $PANTTY_HOME every seat's
// state wherever the harness has no deny of its own. A workdir inside either is
// refused too: the model's own files would sit in pantty's. Symlinks are
// resolved on both sides, so a link does not hide the overlap.
func workdirApart(s Seat, workdir string) error {
	if workdir == "" {
		return nil // validate reports it missing
	}
	work := resolved(workdir)
	for _, st := range []struct{ what, path string }{
		{"pantty's state root (" + config.HomeEnv + ")", resolved(s.Home)},
		{"the seats' drop directories", resolved(dropRoot(s.Home))},
	} {
		if within(st.path, work) || within(work, st.path) {
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

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// LookPathIn finds an executable on a PATH value: the harness's PATH, which
// is not pantty's own when seat.toml sets one.
func LookPathIn(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(name + " is not on the harness's PATH")
}

// WithDrop adds the drop directory to the harness's environment when isolation is on.
func (a Authority) WithDrop(env map[string]string) map[string]string {
	if a.Drop != "" {
		env[DropEnv] = a.Drop
	} else {
		delete(env, DropEnv)
	}
	return env
}
