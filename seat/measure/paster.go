package measure

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// RawPaster is the unguarded control path: the same keys the driver sends,
// through the same transport (flight.Pane), with board text as it came and
// none of the box rules (it clears whatever the box holds and enters
// wherever). It exists only so a measurement can show a control that
// fails, and it refuses every seat the measurement did not create.
type RawPaster struct {
	pane   flight.Pane
	settle time.Duration
	box    flight.Box // the harness's box and busy readers (Composer nil: only the settle)
}

// NewRawPaster opens the raw path to a throwaway seat, after checking its marker
// carries this run's token.
func NewRawPaster(s state.Seat, token string) (*RawPaster, error) {
	if m, err := state.MeasureMarkerFile(s).Read(); err != nil || m.Token == "" || m.Token != token {
		return nil, fmt.Errorf("raw paster refuses seat %q: it was not created by this measurement", s.Name)
	}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return nil, err
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return nil, err
	}
	ad, err := harness.AdapterFor(cfg.Harness)
	if err != nil {
		return nil, err
	}
	return &RawPaster{pane: flight.Pane{Keys: tmux.New(sess.Socket), ID: sess.PaneID}, settle: 150 * time.Millisecond,
		box: flight.Box{Busy: ad.Busy, Composer: ad.Caps().Composer}}, nil
}

// idleWait bounds the wait for the previous input's turn to end before the
// next paste; shownWait the look for the pasted text in the input box.
const (
	idleWait  = 30 * time.Second
	shownWait = 5 * time.Second
)

// Submit waits for the harness to be done with the previous input, then clears
// the composer, pastes text (bracketed) and sends Enter.
//
// The wait first: an input that reached the model starts a turn, and a
// harness ignores Enter while one runs (Claude Code, and the simulator after
// it): without it the next raw input could be pasted into a busy harness and
// its Enter lost — the measurement's control then "did not dispatch" under
// load (seen twice in CI, 2026-12-04). The raw path bypasses the driver, so
// no turn-end event reaches it: the pane is what it can look at, every 50 ms.
//
// Then, where the harness's box can be read, Enter waits until the box holds
// text (the paste has been taken in): an Enter that arrives while the
// harness still takes the paste in becomes a newline in it — the simulator's
// '#' input "did not dispatch" so once in CI under load (2026-12-04), where
// it takes 10 ms alone. Past shownWait Enter goes anyway: the observation
// then says what happened.
func (p *RawPaster) Submit(text string) error {
	ctx, cancel := context.WithTimeout(context.Background(), idleWait+shownWait+10*time.Second)
	defer cancel()
	idle := func(screen string) bool { return !p.box.Busy(screen) }
	if !flight.Await(p.pane, flight.Wait{Every: 50 * time.Millisecond, Limit: idleWait, Cond: idle}) {
		return fmt.Errorf("raw paster: the harness still shows a running turn after %s", idleWait)
	}
	if err := p.pane.Clear(ctx); err != nil {
		return err
	}
	if err := p.pane.Put(ctx, text); err != nil {
		return err
	}
	// The same quiet time the driver leaves before Enter, then the look.
	flight.Await(p.pane, flight.Wait{Quiet: p.settle, Every: 20 * time.Millisecond, Limit: shownWait, Cond: p.box.Shows})
	return p.pane.Enter(ctx)
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
