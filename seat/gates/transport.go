package gates

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

// Transports are the paths a seat of harness can run on, tmux first: tmux
// for every harness, and app-server for one whose adapter has an app server
// (Capabilities.AppServer: Codex). Each is measured and judged on its own.
func Transports(name string) []string {
	out := []string{config.TransportTmux}
	if ad, err := harness.AdapterFor(name); err == nil && ad.Caps().AppServer != nil {
		out = append(out, config.TransportAppServer)
	}
	return out
}

// What a failing gate that rules residency out says on the tmux path: the
// seat must run turn-spawned. On another path it says the seat runs on tmux
// (offTmux).
const (
	turnFix  = "run it turn-spawned (shape = \"turn\")"
	mustTurn = "must run turn-spawned"
)

// offTmux rewords a verdict on a path other than tmux: what rules it out
// sends a seat to tmux (transport = "auto" falls back to it), not to the
// turn-spawned shape.
func (v *Verdict) offTmux() {
	if v.Transport == config.TransportTmux {
		return
	}
	v.Summary = strings.Replace(v.Summary, mustTurn, "not on this path: run the seat on tmux", 1)
	for i := range v.Gates {
		v.Gates[i].Fix = strings.Replace(v.Gates[i].Fix, turnFix, "run the seat on tmux (transport = \"tmux\", or \"auto\", which falls back to it)", 1)
	}
}

// measureCmd is the command that measures harness's contract on transport.
func measureCmd(harness, transport string) string {
	cmd := "pantty measure contract --harness " + harness
	if transport != config.TransportTmux {
		cmd += " --transport " + transport
	}
	return cmd
}

// dataDispatch judges the dispatch gate of a path with no command parser in
// front of the model (an app server: turn/start carries the guarded text as
// data, with no composer, paste or Enter), by that path's measured submit
// row: the board message reached the model as exactly one turn. Without a
// contract of the path (or past its fail_after) the gate fails.
func dataDispatch(t tableRow, c *state.Contract, now time.Time) Gate {
	g := Gate{Name: t.name, Question: t.question, Requires: t.requires, Consequence: t.consequence,
		BlocksResident: t.blocks, Status: Fail}
	ev, st, why, ok := localRow("submit", c, now)
	if !ok {
		g.Reason = "no contract measured here on this path within its dates: nothing says board text reached the model as text"
		if c != nil {
			g.Fix = "re-measure: " + measureCmd(c.Harness, c.On())
		}
		return g
	}
	ev.Row = "dispatch"
	g.Evidence = []Evidence{ev}
	g.Status = st
	g.Reason = "no command parser on this path: turn/start carries the board text as data (no composer, no paste, no Enter), judged by the submit row: " + why
	if st != Pass {
		g.Fix = "re-measure: " + measureCmd(c.Harness, c.On())
	}
	return g
}

// ChooseTransport resolves the transport a driver starting now runs cfg's
// seat on, and says why. A declared tmux or app-server is itself (why "").
// transport = "auto" is app-server only when the harness has an app server,
// the seat may run on it (config.AppServerRefusal: resident, no args, no
// [[ladder]]), and the contract measured here on that path for the installed
// version has every row met within its fail_after; tmux otherwise, the
// reason naming the first condition unmet. The protocol is experimental at
// Codex, so it is judged per version: an upgrade without a new measurement
// runs on tmux until `pantty measure contract` has measured it.
func ChooseTransport(home string, cfg config.Config, now time.Time) (transport, why string) {
	if cfg.Transport != config.TransportAuto {
		return cfg.Transport, ""
	}
	if !hasAppServer(cfg.Harness) {
		return config.TransportTmux, "auto: tmux: the only path of " + cfg.Harness + " (it has no app server)"
	}
	if err := cfg.AppServerRefusal(); err != nil {
		return config.TransportTmux, "auto: tmux: this seat cannot run on the app server: " + err.Error()
	}
	version, note := Installed(home, cfg.Harness, seatBinary(home, cfg))
	return chooseAt(home, cfg.Harness, version, note, now)
}

// AutoChoice is what transport = "auto" picks for a plain resident seat of
// harness at version (`pantty gates` shows it); "" for a harness with one
// path.
func AutoChoice(home, name, version string, now time.Time) (transport, why string) {
	if !hasAppServer(name) {
		return "", ""
	}
	return chooseAt(home, name, version, "", now)
}

func hasAppServer(name string) bool { return len(Transports(name)) > 1 }

// chooseAt is ChooseTransport's measured part, for an installed version
// ("" when the binary could not say: note says why).
func chooseAt(home, name, version, note string, now time.Time) (string, string) {
	tmux := func(f string, a ...any) (string, string) {
		return config.TransportTmux, "auto: tmux: " + fmt.Sprintf(f, a...)
	}
	if version == "" {
		return tmux("the installed %s's version is unknown, so no app-server measurement can vouch for it (%s)", name, orUnknown(note))
	}
	measure := measureCmd(name, config.TransportAppServer)
	c, err := state.LoadContract(home, name, version, config.TransportAppServer)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tmux("no app-server contract measured here for %s %s (%s)", name, version, measure)
	case err != nil:
		return tmux("the app-server contract of %s %s cannot be read: %v", name, version, err)
	case c.Harness != name || c.Version != version || c.On() != config.TransportAppServer:
		return tmux("%s is not the app-server contract of %s %s (it says %s %s on %s)",
			state.ContractPath(home, name, version, config.TransportAppServer), name, version, c.Harness, c.Version, c.On())
	case now.After(c.FailAfter):
		return tmux("the app-server contract of %s %s (measured here %s) is past its fail_after %s: %s", name, version, day(c.AsOf), day(c.FailAfter), measure)
	}
	var unmet []string
	for _, op := range state.ContractRows {
		r, ok := c.Row(op)
		switch {
		case !ok:
			unmet = append(unmet, op+" not measured")
		case !r.Met:
			unmet = append(unmet, op+" unmet ("+r.Value+")")
		}
	}
	if len(unmet) > 0 {
		return tmux("the app-server contract of %s %s (measured here %s) is not met: %s", name, version, day(c.AsOf), strings.Join(unmet, "; "))
	}
	why := fmt.Sprintf("auto: app-server: every row of the app-server contract of %s %s is met (measured here %s", name, version, day(c.AsOf))
	if now.After(c.Revisit) {
		why += fmt.Sprintf(", past its revisit date %s: %s", day(c.Revisit), measure)
	}
	return config.TransportAppServer, why + ")"
}
