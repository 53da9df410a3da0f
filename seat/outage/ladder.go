package outage

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
)

// Plan is which rung a seat runs now and whether it must wait for a provider.
type Plan struct {
	Config   config.Config // the seat's config on the running rung
	Rung     string        // the running rung's name ("" without a ladder)
	Index    int           // its index on the ladder
	Floor    int           // the demotion floor's index
	Provider string        // the running rung's provider
	Wait     time.Time     // non-zero: every rung at or below the floor is blocked until then
	Waiting  string        // the wait, in words (heartbeat and recover output)
	Why      string        // why this rung, in words
}

// PlanFor derives the running rung: the first rung at or below the floor whose
// provider is not blocked at now. When every one is blocked the seat waits for
// the earliest unblock (never the latest) on the rung it belongs to.
func PlanFor(c config.Config, floor string, blocks state.Blocks, now time.Time) Plan {
	rs := c.Rungs()
	fi, _ := c.RungIndex(floor)
	best, bestUntil := -1, time.Time{}
	var skipped []string
	for i := fi; i < len(rs); i++ {
		b, blocked := blocks.Active(rs[i].Provider, now)
		if !blocked {
			p := Plan{Config: c.OnRung(i), Rung: rs[i].Name, Index: i, Floor: fi, Provider: rs[i].Provider}
			switch {
			case len(skipped) > 0:
				p.Why = "provider blocked on " + strings.Join(skipped, ", ")
			case fi > 0:
				p.Why = "demotion floor " + rs[fi].Name
			default:
				p.Why = "top rung"
			}
			return p
		}
		skipped = append(skipped, fmt.Sprintf("rung %s (%s until %s)", rs[i].Name, rs[i].Provider, b.Until.Format(time.RFC3339)))
		if best < 0 || b.Until.Before(bestUntil) {
			best, bestUntil = i, b.Until
		}
	}
	b := blocks[rs[best].Provider]
	p := Plan{Config: c.OnRung(best), Rung: rs[best].Name, Index: best, Floor: fi, Provider: rs[best].Provider, Wait: bestUntil}
	by := ""
	if b.Seat != "" {
		by = " (refused on seat " + b.Seat + ")"
	}
	p.Waiting = fmt.Sprintf("provider %s: %s until %s%s", rs[best].Provider, b.Error, bestUntil.UTC().Format(time.RFC3339), by)
	if b.Text != "" {
		p.Waiting += ": " + b.Text // the provider's own words
	}
	p.Why = "every rung at or below the floor is blocked; waiting for the earliest unblock"
	return p
}

// Plan reads the floor (recovery.toml) and the provider blocks and derives the
// running rung for config c (seat.toml as loaded).
func PlanOf(s state.Seat, c config.Config, now time.Time) (Plan, error) {
	floor := ""
	if c.HasLadder() {
		r, err := s.RecoveryFile().Read()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Plan{}, err
		}
		floor = r.Floor
	}
	blocks, err := ReadBlocks(s.Home)
	if err != nil {
		return Plan{}, err
	}
	return PlanFor(c, floor, blocks, now), nil
}

// RunningConfig is c on the rung the seat should run now; a new driver starts
// there. When the records cannot be read it stays on c (and says why).
func RunningConfig(s state.Seat, c config.Config, now time.Time) (config.Config, error) {
	p, err := PlanOf(s, c, now)
	if err != nil {
		return c, err
	}
	return p.Config, nil
}

// LaunchedRung is the rung the pane was last launched on, from launch.toml.
func LaunchedRung(s state.Seat) (string, error) {
	lf, err := s.LaunchFile().Read()
	if err != nil {
		return "", err
	}
	return lf.Env[config.RungEnv], nil
}
