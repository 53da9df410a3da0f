package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// baseSim is the baseline's harness: the same simulator, the same binary, the
// same fast timings and the same hooks (`pantty hook` into a seat directory
// nobody drives), started in its own tmux server — but driven by the common
// tmux technique instead of pantty's driver. Its hook events give the same
// evidence (UserPromptSubmit, Stop) to time against.
type baseSim struct {
	tm   *tmux.Client
	pane string
	s    state.Seat
	w    *watcher
}

// Baseline technique parameters: the ones commonly used to drive a TUI
// through tmux.
const (
	basePauseBeforeEnter = 500 * time.Millisecond
	basePollEvery        = 200 * time.Millisecond
	baseIdlePolls        = 2
)

func (b *bench) startBaseSim(name string) (*baseSim, error) {
	home, socket := b.home(name)
	rs, err := b.newRealSeat(home, socket, name)
	if err != nil {
		return nil, err
	}
	s := rs.s
	if err := s.Ensure(); err != nil {
		return nil, err
	}
	settings, err := hookwire.ClaudeSettings(b.pantty, s, false, state.Authority{})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.SettingsPath(), settings, 0o600); err != nil {
		return nil, err
	}
	w, err := newWatcher(s, false)
	if err != nil {
		return nil, err
	}
	env := []string{"PANTTY_SIM_STATE=" + s.HarnessDir()}
	for k, v := range simEnv {
		env = append(env, k+"="+v)
	}
	work := filepath.Join(b.work, name)
	os.MkdirAll(work, 0o700)
	tm := tmux.New(socket)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := tm.NewSession(ctx, tmux.NewSessionOpts{Name: name, Dir: work, Width: 200, Height: 50, Env: env,
		Argv: []string{b.pantty, "sim", "--settings", s.SettingsPath(), "--session-id", state.NewSessionID()}})
	if err != nil {
		w.close()
		return nil, err
	}
	bs := &baseSim{tm: tm, pane: p.ID, s: s, w: w}
	err = w.until("the baseline simulator's SessionStart", 15*time.Second, func() bool {
		_, _, ok := w.event(hookwire.EvSessionStart, func(hookwire.Event) bool { return true })
		return ok
	})
	if err != nil {
		w.close()
		return nil, err
	}
	return bs, nil
}

func (bs *baseSim) close() { bs.w.close() }

// poll is one capture-pane of the baseline's idle polling.
type poll struct {
	at   time.Time
	busy bool
}

// deliver is the baseline technique: `send-keys -l` the text, sleep 500 ms,
// send Enter, then poll `capture-pane` every 200 ms until two consecutive
// polls show the harness idle. It returns when it started, and every poll;
// the last poll is the technique's "done".
func (bs *baseSim) deliver(text string) (start time.Time, polls []poll, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start = time.Now()
	if err := bs.tm.SendLiteral(ctx, bs.pane, text); err != nil {
		return start, nil, err
	}
	time.Sleep(basePauseBeforeEnter)
	if err := bs.tm.SendKeys(ctx, bs.pane, "Enter"); err != nil {
		return start, nil, err
	}
	idle := 0
	for idle < baseIdlePolls {
		time.Sleep(basePollEvery)
		screen, err := bs.tm.Capture(ctx, bs.pane)
		if err != nil {
			return start, polls, err
		}
		p := poll{at: time.Now(), busy: strings.Contains(screen, "esc to interrupt")}
		polls = append(polls, p)
		if p.busy {
			idle = 0
		} else {
			idle++
		}
		if len(polls) > 300 {
			return start, polls, fmt.Errorf("the pane never went idle")
		}
	}
	return start, polls, nil
}
