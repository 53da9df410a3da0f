package measure

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// RawPaster is the unguarded control path: the same paste the driver does, with
// board text as it came. It exists only so a measurement can show a control that
// fails, and it refuses every seat the measurement did not create.
type RawPaster struct {
	tm     *tmux.Client
	pane   string
	settle time.Duration
	busy   func(screen string) bool // the harness's running-turn reading of its pane
	// box reads the harness's input box (Capabilities.Composer), nil when it
	// cannot: the paste is then given only the settle time.
	box func(screen string) (string, bool)
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
	return &RawPaster{tm: tmux.New(sess.Socket), pane: sess.PaneID, settle: 150 * time.Millisecond, busy: ad.Busy,
		box: ad.Caps().Composer}, nil
}

// idleWait bounds the wait for the previous input's turn to end before the
// next paste.
const idleWait = 30 * time.Second

// waitIdle waits until the pane shows no running turn. An input that reached
// the model starts a turn, and a harness ignores Enter while one runs (Claude
// Code, and the simulator after it): without this the next raw input could be
// pasted into a busy harness and its Enter lost — the measurement's control
// then "did not dispatch" under load (seen twice in CI, 2026-12-04). The raw
// path bypasses the driver, so no turn-end event reaches it: the pane is what
// it can look at, every 50 ms.
func (p *RawPaster) waitIdle(ctx context.Context) error {
	deadline := time.Now().Add(idleWait)
	for {
		screen, err := p.tm.Capture(ctx, p.pane)
		if err != nil {
			return err
		}
		if !p.busy(screen) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("raw paster: the harness still shows a running turn after %s", idleWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Submit waits for the harness to be done with the previous input, then clears
// the composer, pastes text (bracketed) and sends Enter.
func (p *RawPaster) Submit(text string) error {
	ctx, cancel := context.WithTimeout(context.Background(), idleWait+10*time.Second)
	defer cancel()
	if err := p.waitIdle(ctx); err != nil {
		return err
	}
	if err := p.tm.SendKeys(ctx, p.pane, "C-u"); err != nil {
		return err
	}
	if err := p.tm.Paste(ctx, p.pane, []byte(text)); err != nil {
		return err
	}
	time.Sleep(p.settle) // the same quiet time the driver leaves before Enter
	p.waitShown(ctx)
	return p.tm.SendKeys(ctx, p.pane, "Enter")
}

// shownWait bounds the look for the pasted text in the input box.
const shownWait = 5 * time.Second

// waitShown waits, where the harness's input box can be read, until it holds
// text: the paste has been taken in. An Enter that arrives while the harness
// still takes the paste in becomes a newline in it, and the input is never
// submitted — the simulator's '#' input "did not dispatch" so once in CI under
// load (2026-12-04), where it takes 10 ms alone. The raw path has no event for
// it; the pane is looked at every 20 ms. Past the bound Enter goes anyway, as
// before: the observation then says what happened.
func (p *RawPaster) waitShown(ctx context.Context) {
	if p.box == nil {
		return
	}
	deadline := time.Now().Add(shownWait)
	for time.Now().Before(deadline) {
		screen, err := p.tm.Capture(ctx, p.pane)
		if err != nil {
			return
		}
		if text, ok := p.box(screen); ok && strings.TrimSpace(text) != "" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
