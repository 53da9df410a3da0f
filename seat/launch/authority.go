package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

// ErrPerSeat is ProbeIsolation's answer without a seat, for a harness whose
// sandbox can be probed only with the seat's own files (Codex's CODEX_HOME).
var ErrPerSeat = errors.New("probed per seat at launch")

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
func DecideAuthority(sb Sandbox, s state.Seat, c config.Config, env map[string]string, now time.Time) (state.Authority, error) {
	a := state.Authority{Protected: []string{filepath.Clean(s.Home)}, At: now.UTC()}
	if err := state.WorkdirApart(s, c.Workdir); err != nil { // seat.toml may have changed since the driver loaded it
		return a, fmt.Errorf("%w: %v", state.ErrBadInput, err)
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
		if p != "" && !state.Within(p, a.Protected[0]) && !slices.Contains(a.Protected, filepath.Clean(p)) {
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
			return a, fmt.Errorf("%w: seat.toml [authority] isolation = \"on\" but %s", state.ErrBadInput, a.Why)
		}
		return a, nil
	}
	a.Drop = state.DropDir(s)
	if err := os.MkdirAll(a.Drop, 0o700); err != nil {
		return a, fmt.Errorf("drop directory: %w", err)
	}
	if err := os.Chmod(filepath.Dir(a.Drop), 0o700); err != nil {
		return a, fmt.Errorf("drop directory: %w", err)
	}
	return a, nil
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
