package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// readLadder reads the rung the pane was launched on and recover's floor.
// launch and launchErr are launch.toml as the row read it (outage.LaunchedRung's
// record).
func readLadder(s state.Seat, launch state.LaunchFile, launchErr error, now time.Time) Ladder {
	rung, err := launch.Env[config.RungEnv], launchErr
	if err != nil {
		return Ladder{Meta: missing(err, "no launch.toml: the harness was never launched")}
	}
	l := Ladder{Rung: ptr(rung)}
	bound := "launch.toml env " + config.RungEnv + " (the rung the pane was last launched on)"
	why := ""
	var at time.Time
	rec, err := s.RecoveryFile().Read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "floor: no recover record (recovery.toml absent: recover has never had to act on this seat)"
		l.Revived = ptr(0)
	case err != nil:
		return Ladder{Meta: Meta{State: Error, Why: err.Error()}, Rung: ptr(rung)}
	default:
		l.Floor, l.MeansFailures, l.Failures = ptr(rec.Floor), ptr(rec.MeansFailures), ptr(rec.Failures)
		l.Revived = ptr(rec.Revived)
		if rec.FloorWhy != "" {
			l.FloorWhy = ptr(rec.FloorWhy)
		}
		if !rec.NextAttempt.IsZero() {
			l.NextAttempt = ptr(rec.NextAttempt.UTC())
		}
		bound += "; floor from recovery.toml (written by recover)"
		at = rec.LastAt
	}
	l.Meta = meta(Known, why, bound, at, now)
	return l
}

// readWaits lists the provider waits that hold the seat: the active blocks in
// providers.toml on any provider of the seat's rungs (blocks are per provider,
// shared by every seat on it), and any message the driver re-queued after a
// refusal whose wait no such block covers (a block the driver could not write).
func readWaits(s state.Seat, cfg config.Config, cfgErr error, es []inbox.Entry, entErr error, now time.Time) Waits {
	if cfgErr != nil {
		return Waits{Meta: missing(cfgErr, "no seat.toml: the seat's providers are not known")}
	}
	blocks, err := outage.ReadBlocks(s.Home)
	if err != nil {
		return Waits{Meta: Meta{State: Error, Why: err.Error()}}
	}
	top := cfg.Provider
	if top == "" {
		top = cfg.Harness
	}
	type use struct{ provider, rung string }
	uses := []use{{top, ""}}
	for _, r := range cfg.Ladder {
		p := r.Provider
		if p == "" {
			p = top
		}
		uses = append(uses, use{p, r.Name})
	}
	ws := []Wait{}
	seen := map[string]bool{}
	var names []string
	for _, u := range uses {
		if seen[u.provider] {
			continue
		}
		seen[u.provider] = true
		names = append(names, u.provider)
		b, ok := blocks.Active(u.provider, now)
		if !ok {
			continue
		}
		of := "the seat's provider"
		if u.rung != "" {
			of = "provider of rung " + u.rung
		}
		bound := fmt.Sprintf("providers.toml [%s] (%s in seat.toml)", u.provider, of)
		if b.Seat != "" {
			bound += ", refused on seat " + b.Seat
		}
		reason := b.Error
		if b.Text != "" {
			reason += ": " + b.Text
		}
		if !b.Parsed {
			reason += " (no reset time in the refusal: re-probed at this time)"
		}
		ws = append(ws, Wait{Provider: u.provider, Until: b.Until.UTC(), Reason: reason, Bound: bound})
	}
	for _, e := range es {
		st := e.Status
		if st.State != inbox.StateQueued || st.Reason != outage.ReasonProviderRefusal || !st.NotBefore.After(now) {
			continue
		}
		covered := false
		for _, w := range ws {
			covered = covered || !w.Until.Before(st.NotBefore)
		}
		if !covered {
			ws = append(ws, Wait{Provider: top, Until: st.NotBefore.UTC(), Reason: st.Detail,
				Bound: "inbox/status/" + e.Msg.ID + ".toml not_before (the driver re-queued it after a refusal; no providers.toml block covers it)"})
		}
	}
	bound := "providers.toml blocks on the seat's providers (" + strings.Join(names, ", ") + ") and its re-queued messages"
	why := ""
	if _, err := os.Lstat(state.ProvidersPath(s.Home)); errors.Is(err, fs.ErrNotExist) {
		why = "providers.toml absent: no provider block has been recorded"
	}
	if entErr != nil {
		why = strings.TrimPrefix(why+"; inbox unreadable, re-queued messages not checked: "+entErr.Error(), "; ")
	}
	return Waits{Meta: Meta{State: Known, Why: why, Bound: bound}, Waits: ws}
}

func readCompaction(s state.Seat, now time.Time) Compaction {
	c, err := s.CycleFile().Read()
	if err != nil {
		return Compaction{Meta: missing(err, "no handoff/cycle.toml: no compaction cycle has run")}
	}
	out := Compaction{ID: ptr(c.ID), CycleState: ptr(c.State), Reason: ptr(c.Reason)}
	if !c.Requested.IsZero() {
		out.Requested = ptr(c.Requested.UTC())
	}
	at := c.Requested
	if !c.Ended.IsZero() {
		out.Ended = ptr(c.Ended.UTC())
		at = c.Ended
	}
	if c.Before > 0 {
		out.Before = ptr(c.Before)
	}
	if c.After > 0 {
		out.After = ptr(c.After)
	}
	if c.Error != "" {
		out.Error = ptr(c.Error)
	}
	out.Meta = meta(Known, "", "handoff/cycle.toml of this seat (written by its driver)", at, now)
	return out
}

// readMode reports direct or relay from mode.toml (what the driver observed of
// people at the pane), or that the seat ignores people attaching.
func readMode(s state.Seat, cfg config.Config, cfgErr error, now time.Time) Text {
	if cfgErr == nil && cfg.Relay == config.RelayIgnore {
		return Text{Meta: Meta{State: Known, Bound: "seat.toml relay = \"ignore\": people attach only to watch"}, Value: ptr(state.ModeDirect)}
	}
	m, err := s.ModeFile().Read()
	if err != nil {
		return Text{Meta: missing(err, "no mode.toml: no person has been observed at the pane")}
	}
	v, why := m.Mode, m.Why
	if m.Draft != "" && m.Mode == state.ModeDirect {
		v = m.Mode + " (held by a draft)"
	}
	return Text{Meta: meta(Known, "", "mode.toml ("+why+")", m.Since, now), Value: ptr(v)}
}

// readLastExit reports the harness's last exit and its words (harness-exit.toml,
// captured from the pane before any respawn): stale once the harness was
// launched again after it, because the words then describe an earlier launch.
func readLastExit(s state.Seat, sess state.Session, haveSess bool, now time.Time) Text {
	x, err := s.HarnessExitFile().Read()
	if err != nil {
		return Text{Meta: missing(err, "no harness-exit.toml: the harness has not been seen to exit")}
	}
	v := fmt.Sprintf("%s (status %d): %s", x.Why, x.Status, x.Words())
	if x.BeforeReady {
		v = fmt.Sprintf("exited before it came up (%d in a row%s), %s", x.InARow, map[bool]string{true: ", driver gave up"}[x.GaveUp], v)
	}
	state, why := Known, ""
	if haveSess && sess.LaunchedAt.After(x.At) {
		state, why = Stale, "the harness was launched again after this exit"
	}
	return Text{Meta: meta(state, why, "harness-exit.toml (the pane's last lines, captured by the driver before the respawn)", x.At, now), Value: ptr(v)}
}

// readIsolation reports what the last launch recorded in authority.toml: the
// sandbox as it was probed then, not what seat.toml asks for.
func readIsolation(s state.Seat, now time.Time) Text {
	a, err := s.AuthorityFile().Read()
	if err != nil {
		return Text{Meta: missing(err, "no authority.toml: the harness was not launched by this version of pantty")}
	}
	return Text{Meta: meta(Known, "", "authority.toml (the last launch): "+a.Why, a.At, now), Value: ptr(a.Isolation)}
}

// readActivity reports the current tool call; it says when activity is off, and
// that switching takes effect at the harness's next launch.
func readActivity(s state.Seat, cfg config.Config, cfgErr error, sess state.Session, haveSess bool, now time.Time) Activity {
	if cfgErr == nil && !cfg.Activity {
		return Activity{Meta: Meta{State: Unknown, Why: "activity is off in seat.toml (turning it on takes effect at the harness's next launch)"}}
	}
	a, err := s.ActivityFile().Read()
	if err != nil {
		why := "no activity.toml: no tool call recorded"
		if haveSess && !sess.LaunchedAt.IsZero() {
			why += " (activity applies from the launch after it was turned on)"
		}
		return Activity{Meta: missing(err, why)}
	}
	if now.Sub(a.At) > state.ActivityQuiet {
		return Activity{Meta: meta(Stale, "quiet for longer than "+state.ActivityQuiet.String(), "activity.toml (PreToolUse/PostToolUse hooks)", a.At, now)}
	}
	return Activity{Meta: meta(Known, "", "activity.toml (PreToolUse/PostToolUse hooks)", a.At, now), Tool: ptr(a.Tool), What: ptr(a.What), Phase: ptr(a.Phase)}
}
