package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/urfave/cli/v2"
)

// attachable is the seat named on the command line and its tmux session:
// what `seat attach` and `seat watch-pane` attach a terminal to.
func attachable(c *cli.Context) (state.Seat, state.Session, error) {
	s, err := seatArg(c, true)
	if err != nil {
		return s, state.Session{}, err
	}
	sess, err := s.SessionFile().Read()
	if err != nil {
		return s, sess, fmt.Errorf("seat %s has no session yet (start it first): %w", s.Name, err)
	}
	return s, sess, nil
}

// needTerminal refuses an attach without a terminal: tmux needs one to
// attach, and without it answers "open terminal failed: not a terminal"
// after relay was entered. It says so first, in the user's words, with what
// works from a script.
func needTerminal(c *cli.Context, s state.Seat) error {
	if isTerminal(os.Stdin) && isTerminal(os.Stdout) {
		return nil
	}
	return usageErr("pantty %s needs a terminal (stdin and stdout are not one here); from a script read the seat with 'pantty status %s' or 'pantty seat inbox %s'; nothing was changed",
		c.Command.FullName(), s.Name, s.Name)
}

func seatAttach(c *cli.Context) error {
	s, sess, err := attachable(c)
	if err != nil {
		return err
	}
	// Nothing to attach to (a stopped seat, or a turn-spawned one, which
	// never has a pane): say so before relay is entered, or the failed attach would
	// leave the seat holding its queue in relay.
	if sess.TmuxName == "" {
		chose := `transport = "app-server"`
		if sess.TransportWhy != "" {
			chose = `transport = "auto" chose it`
		}
		return fmt.Errorf("seat %s runs on its Codex app server (%s): it has no pane to attach to until its thread's first turn (docs/codex.md); read it with 'pantty status %s'; nothing was changed",
			s.Name, chose, s.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	ok, err := tmux.New(sess.Socket).HasSession(ctx, sess.TmuxName)
	cancel()
	switch {
	case errors.Is(err, tmux.ErrNoServer) || err == nil && !ok:
		if cfg, _, cerr := seatAdapter(s); cerr == nil && cfg.Shape == config.ShapeTurn {
			return fmt.Errorf("seat %s is turn-spawned (shape = \"turn\"): its harness runs as the driver's child for each message, in no pane, so there is nothing to attach to; read it with 'pantty status %s'; nothing was changed",
				s.Name, s.Name)
		}
		return fmt.Errorf("seat %s has no tmux session to attach to now (%s on %s): a stopped seat has none; nothing was changed",
			s.Name, sess.TmuxName, sess.Socket)
	case err != nil:
		return fmt.Errorf("%w: seat %s: tmux session %s: %v", state.ErrUnobservable, s.Name, sess.TmuxName, err)
	}
	if err := needTerminal(c, s); err != nil {
		return err
	}
	// Relay first, then attach: the driver stops submitting before the person
	// can type, and a submission already in flight finishes normally.
	_, live, _ := s.LiveOwner()
	if live {
		if _, err := s.Ask(state.Request{Kind: state.CtlRelay, Args: "on"}, 15*time.Second); err != nil {
			return err
		}
		defer s.Ask(state.Request{Kind: state.CtlRelay, Args: "off"}, 15*time.Second)
	}
	cmd := exec.Command("tmux", "-u", "-S", sess.Socket, "attach-session", "-t", "="+sess.TmuxName)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

func seatWatchPane(c *cli.Context) error {
	s, sess, err := attachable(c)
	if err != nil {
		return err
	}
	if err := needTerminal(c, s); err != nil {
		return err
	}
	// Read-only: this client cannot type, so the driver stays in direct mode.
	return syscall.Exec("/usr/bin/env", []string{"env", "tmux", "-u", "-S", sess.Socket, "attach-session", "-r", "-t", "=" + sess.TmuxName}, os.Environ())
}

func seatRelay(c *cli.Context) error {
	s, rest, err := steered(c, "seat relay")
	if err != nil {
		return err
	}
	if len(rest) > 0 || !c.Bool("off") {
		return usageErr("usage: pantty seat relay NAME --off  (relay is entered by attaching; --off is for when observation fails)")
	}
	return ask(s, state.Request{Kind: state.CtlRelay, Args: "force-off"}, 15*time.Second)
}
