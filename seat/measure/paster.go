package measure

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/tmux"
)

// marker is measure.toml in a throwaway seat's directory: the token proves this
// measurement created the seat.
type marker struct {
	Token string `toml:"token"`
}

func markerPath(s seat.Seat) string { return filepath.Join(s.Dir, "measure.toml") }

// RawPaster is the unguarded control path: the same paste the driver does, with
// board text as it came. It exists only so a measurement can show a control that
// fails, and it refuses every seat the measurement did not create.
type RawPaster struct {
	tm     *tmux.Client
	pane   string
	settle time.Duration
}

// NewRawPaster opens the raw path to a throwaway seat, after checking its marker
// carries this run's token.
func NewRawPaster(s seat.Seat, token string) (*RawPaster, error) {
	var m marker
	if err := seat.ReadState(markerPath(s), &m); err != nil || m.Token == "" || m.Token != token {
		return nil, fmt.Errorf("raw paster refuses seat %q: it was not created by this measurement", s.Name)
	}
	sess, err := s.ReadSession()
	if err != nil {
		return nil, err
	}
	return &RawPaster{tm: tmux.New(sess.Socket), pane: sess.PaneID, settle: 150 * time.Millisecond}, nil
}

// Submit clears the composer, pastes text (bracketed) and sends Enter.
func (p *RawPaster) Submit(text string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.tm.SendKeys(ctx, p.pane, "C-u"); err != nil {
		return err
	}
	if err := p.tm.Paste(ctx, p.pane, []byte(text)); err != nil {
		return err
	}
	time.Sleep(p.settle) // the same quiet time the driver leaves before Enter
	return p.tm.SendKeys(ctx, p.pane, "Enter")
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).Output()
	return string(out), err
}
