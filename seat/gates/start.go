package gates

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// Local evaluates harness on the tmux path with the local measurements under
// home: the dispatch facts file $PANTTY_HOME/facts/<harness>-resident.toml,
// when there is one, and the contract measured for the version. The version
// is the one given, else the build the local facts file recorded, else
// unobserved (judged by the registry's newest range for the harness, and the
// verdict says so). Callers that know the installed binary ask it first
// (Installed; CheckStart does).
func Local(home, harness, version string, now time.Time) Verdict {
	return LocalOn(home, harness, version, config.TransportTmux, now)
}

// LocalOn is Local for one transport: tmux as Local says; another path (a
// harness's app server) is judged by the contract measured here on it alone
// (contract-<transport>.toml), since the registry's rows are the tmux path's.
func LocalOn(home, harness, version, transport string, now time.Time) Verdict {
	r, err := Load()
	if err != nil {
		v := failAll(harness, version, now, "the gates registry could not be read: "+err.Error(),
			"fix or unset $"+RegistryEnv)
		v.Transport = transport
		return v
	}
	var local *state.FactsFile
	f, err := state.LoadFacts(home, harness, config.ShapeResident)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = nil
	case err != nil:
	default:
		local = &f
	}
	fromFacts := false
	if version == "" && local != nil {
		version, fromFacts = VersionOf(local.Build), true
	}
	var contract *state.Contract
	if c, cerr := state.LoadContract(home, harness, version, transport); cerr == nil && c.Harness == harness && c.Version == version && c.On() == transport {
		contract = &c
	}
	v := r.evaluate(harness, version, transport, local, err, contract, now)
	if fromFacts && version != "" {
		v.VersionNote = fmt.Sprintf("%s, from the local facts file's build %q", version, local.Build)
	}
	return v
}

// Refusal is a `seat start` refused by a gate: exit 2, nothing changed.
type Refusal struct {
	Gate string // the first refusing gate, in the table's order
	msg  string
}

func (r *Refusal) Error() string { return r.msg }

// CheckStart acts on the verdict for a seat about to start, at now. It refuses
// (a *Refusal) the resident shape when a gate that rules residency out fails
// (compaction first, then cancel, completion, dispatch), and an automated
// compaction policy ([refresh] policy fixed or context) when the context gate
// fails. It
// returns the warnings a start should print: gates past their revisit date, and
// failing gates whose consequence does not stop the start.
func CheckStart(home string, cfg config.Config, now time.Time) (Verdict, []string, error) {
	version, note := Installed(home, cfg.Harness, seatBinary(home, cfg))
	v := Local(home, cfg.Harness, version, now)
	if version != "" {
		v.VersionNote = note
	}
	if cfg.Shape != config.ShapeResident {
		return v, nil, nil
	}
	if v.Range == "" && v.Version != "" && cfg.Gates.Unmeasured == config.UnmeasuredWarn {
		return v, []string{fmt.Sprintf("%s %s has no measurement (no registry range covers it, no local contract): running it anyway because [gates] unmeasured = \"warn\"; measure it: pantty measure contract --harness %s",
			cfg.Harness, v.Version, cfg.Harness)}, nil
	}
	var refusing []Gate
	var warnings []string
	for _, g := range v.Gates {
		switch {
		case g.Status == Fail && g.BlocksResident:
			refusing = append(refusing, g)
		case g.Status == Fail && g.Name == "context" && automated(cfg.Refresh.Policy):
			g.Fix = fmt.Sprintf("set [refresh] policy = %q or %q in seat.toml (now %q: pantty would decide when to compact), or %s",
				config.RefreshNone, config.RefreshSelf, cfg.Refresh.Policy, g.Fix)
			refusing = append(refusing, g)
		case g.Status == Fail:
			warnings = append(warnings, fmt.Sprintf("the %s gate fails for %s: %s (consequence: %s)", g.Name, v.Label(), g.Reason, lower(g.Consequence)))
		case g.Status == Warn:
			warnings = append(warnings, fmt.Sprintf("the %s gate warns for %s: %s; %s", g.Name, v.Label(), g.Reason, g.Fix))
		}
	}
	if len(refusing) == 0 {
		return v, warnings, nil
	}
	g := refusing[0]
	msg := fmt.Sprintf("the %s gate fails for %s: %s. A resident seat needs it (if absent: %s). What to do: %s",
		g.Name, v.Label(), g.Reason, lower(g.Consequence), g.Fix)
	if len(refusing) > 1 {
		var also []string
		for _, o := range refusing[1:] {
			also = append(also, o.Name)
		}
		msg += ". Also failing: " + strings.Join(also, ", ")
	}
	msg += ". 'pantty gates " + cfg.Harness + "' shows every gate"
	return v, warnings, &Refusal{Gate: g.Name, msg: msg}
}

func lower(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// automated reports whether a refresh policy has pantty decide when to compact
// (the table's "automate resident compaction policy"): on a count or on context
// pressure. none (only explicit seat compact) and self (the seat asks) are not.
func automated(policy string) bool {
	return policy == config.RefreshFixed || policy == config.RefreshContext
}

// seatBinary is the harness binary a seat launches: the one its last launch
// resolved (launch-env.toml), else seat.toml's command or the adapter's own
// command resolved on this process's PATH; "" when there is none to ask —
// a harness built into pantty (the simulator runs as `pantty sim`, and
// asking pantty --version read its Go version, 1.26.8, as the simulator's:
// a local measurement then refused the very seat it measured, while
// `pantty gates sim` judged the facts' own build). Start and `pantty gates`
// then judge the same version.
func seatBinary(home string, cfg config.Config) string {
	if cfg.Command == "" {
		if ad, err := harness.AdapterFor(cfg.Harness); err == nil && ad.Caps().Binary == "" {
			return ""
		}
	}
	if s, err := state.Existing(home, cfg.Name); err == nil {
		if rec, err := s.LaunchEnvFile().Read(); err == nil && rec.Binary != "" {
			return rec.Binary
		}
	}
	return HarnessBinary(cfg.Harness, cfg.Command)
}

// HarnessBinary resolves command (or, when empty, the harness adapter's own
// command) on this process's PATH; "" when the harness has no binary of its
// own or it is not found.
func HarnessBinary(name, command string) string {
	if command == "" {
		ad, err := harness.AdapterFor(name)
		if err != nil || ad.Caps().Binary == "" {
			return ""
		}
		command = ad.Caps().Binary
	}
	bin, err := launch.ResolveBinary(command, os.Getenv("PATH"))
	if err != nil {
		return ""
	}
	return bin
}

// Installed asks the harness binary bin its version (cached by path, size and
// modification time: launch.InstalledVersion) and returns the version number
// and a note naming the binary and what it said. "" when bin is "" or cannot
// say; the note then says why and the verdict is judged as unobserved.
func Installed(home, harness, bin string) (version, note string) {
	if bin == "" {
		return "", ""
	}
	said, err := launch.InstalledVersion(home, bin)
	if err != nil {
		return "", fmt.Sprintf("the installed %s could not say its version: %v", harness, err)
	}
	version = VersionOf(said)
	if version == "" {
		return "", fmt.Sprintf("the installed %s (%s) said %q for --version: no version number in it", harness, bin, said)
	}
	return version, fmt.Sprintf("%s, installed: %s --version said %q", version, bin, said)
}
