package harness

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// CanWork is what `seat start` and `pantty recover` check before they change
// anything: the seat's next launch would get every pass_env variable (a key
// left out made the harness start "Not logged in", and messages wait silently),
// and the harness's home is prepared (CheckHome). caller and refresh are as for
// launch.PlannedEnv; again is the command to run once the variables are exported.
// Both refusals are bad input (exit 2) naming a command that works when pasted.
func CanWork(s state.Seat, c config.Config, caller []string, refresh bool, again string) error {
	ad, err := AdapterFor(c.Harness)
	if err != nil {
		return err
	}
	env, missing, err := launch.PlannedEnv(s, c, caller, refresh, ad.Env(s, c))
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return launch.MissingPassEnvError(s, missing, again)
	}
	return CheckHome(ad, s, c, env)
}

// ErrHomeUnprepared: the harness's home lacks answers `pantty seat
// prepare-home` writes (CheckHome). It is bad input too (exit 2); the driver
// refuses a launch only for it, not for a home it could not read (a file the
// running harness was rewriting must not stop a relaunch).
var ErrHomeUnprepared = errors.New("the harness's home is not prepared")

// CheckHome refuses a launch into a home that `pantty seat prepare-home` would
// still change (Capabilities.HomeUnprepared), naming what is missing and the
// command. pantty does not prepare such a home on its own: it is the person's
// (their HOME or CLAUDE_CONFIG_DIR), and what prepare-home writes — a trusted
// folder, an approved API key — is theirs to decide.
func CheckHome(ad Adapter, s state.Seat, c config.Config, env map[string]string) error {
	check := ad.Caps().HomeUnprepared
	if check == nil {
		return nil
	}
	missing, err := check(s, c, env)
	if err != nil {
		return fmt.Errorf("%w: seat %s: %v", state.ErrBadInput, s.Name, err)
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: seat %s: the %s home is not prepared for a start nobody watches (%s): run 'pantty seat prepare-home %s', then start it again%w",
		state.ErrBadInput, s.Name, ad.Name(), strings.Join(missing, "; "), s.Name, quiet{ErrHomeUnprepared})
}

// quiet wraps a sentinel so that errors.Is finds it while the message does not
// repeat it.
type quiet struct{ error }

func (quiet) Error() string   { return "" }
func (q quiet) Unwrap() error { return q.error }
