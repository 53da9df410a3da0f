package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
	"github.com/pantty/pantty/tmux"
	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "a tour on the built-in simulator in a temporary PANTTY_HOME on its own tmux socket (no API key needed)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary state directory for inspection"},
		},
		Action: runDemo,
	}
}

// tour is one demo run: a simulator seat in a throwaway home.
type tour struct {
	home, work, socket, pantty string
	s                          state.Seat
	step                       int
	// ctx ends when the tour is interrupted: the pantty commands it runs
	// are killed then, so none is left behind, orphaned, after its exit.
	ctx context.Context
}

func (t *tour) say(f string, a ...any) { say("   "+f, a...) }

func (t *tour) stage(f string, a ...any) {
	t.step++
	say("\n== %d. %s", t.step, fmt.Sprintf(f, a...))
}

// status prints the seat's derived telemetry (records only: no model turn).
func (t *tour) status() {
	r, err := telemetry.ReadSeat(t.home, t.s.Name, time.Now())
	if err != nil {
		t.say("status: %v", err)
		return
	}
	c := r.Cells()
	t.say("status: phase %s · session %s · model %s · context %s · inbox %s · cursor %s · mode %s",
		c["phase"].Text, c["session"].Text, c["model"].Text, c["context"].Text, c["inbox"].Text, c["cursor"].Text, c["mode"].Text)
}

// runDemo is the tour: start a simulator seat, feed it board messages (two of
// them hostile), run a compaction cycle with the handoff re-injected, kill the
// harness and see it recovered on the same session, then stop and clean up.
func runDemo(c *cli.Context) error {
	tmp, err := os.MkdirTemp("", "pantty-demo-")
	if err != nil {
		return err
	}
	ctx, abandon := context.WithCancel(context.Background())
	defer abandon()
	t := &tour{home: filepath.Join(tmp, "home"), work: filepath.Join(tmp, "work"), socket: filepath.Join(tmp, "tmux.sock"), ctx: ctx}
	if err := os.MkdirAll(t.work, 0o700); err != nil {
		return err
	}
	os.Setenv("PANTTY_TMUX_SOCKET", t.socket) // the driver inherits it: a private server
	os.Setenv(config.HomeEnv, t.home)
	if t.s, err = state.Open(t.home, "demo"); err != nil {
		return err
	}
	var once sync.Once
	cleanup := func(interrupted bool) {
		once.Do(func() {
			if interrupted {
				t.teardown()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			tmux.New(t.socket).KillServer(ctx)
			cancel()
			if c.Bool("keep") {
				say("\nstate kept in %s", t.home)
			} else {
				os.RemoveAll(tmp)
			}
		})
	}
	defer cleanup(false)
	// Interrupted (Ctrl-C, a closed terminal) or its reader gone (`pantty demo
	// | head`): the tour is abandoned, but what it started is not left running.
	// SIGPIPE is taken here so that a write to a closed pipe fails instead of
	// ending the process before the clean-up.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)
	gone := untilOutputClosed(context.Background(), os.Stdout)
	go func() {
		code := 141 // 128 + SIGPIPE, as a shell reports a pipeline cut short
		select {
		case sig := <-sigs:
			if n, ok := sig.(syscall.Signal); ok {
				code = 128 + int(n)
			}
		case <-gone.Done():
		}
		fmt.Fprintln(os.Stderr, "pantty: demo interrupted: stopping its seat and removing its temporary state")
		abandon()
		cleanup(true)
		os.Exit(code)
	}()
	if t.pantty, err = panttyPath(); err != nil {
		return err
	}
	start := time.Now()
	err = t.run()
	if ctx.Err() != nil {
		select {} // interrupted: the clean-up above ends the process
	}
	t.stage("seat stop demo")
	// The stop runs as the command a person would type: a stop records its
	// own process as the holder while it tears down, and the readings call
	// the seat stopped once that holder is gone — this process, in-process,
	// would still be alive and the status below would say the last beat's
	// "stopping".
	if out, serr := exec.CommandContext(ctx, t.pantty, "--home", t.home, "seat", "stop", t.s.Name).CombinedOutput(); serr != nil {
		t.say("stop: %s", strings.TrimSpace(string(out)))
	}
	t.status()
	if err != nil {
		return err
	}
	say("\ndone in %s: every step behaved.", time.Since(start).Round(100*time.Millisecond))
	return nil
}

// teardown stops the tour's seat after an interruption, whatever step the
// tour was at (the tour's own end stops it otherwise). A driver that start
// spawned but that holds no lock yet cannot be asked to stop: it is looked for
// a little longer and stopped once it does. A stop records this process as the
// holder while it tears down, and stopping that holder would kill this
// process: only another one is stopped.
func (t *tour) teardown() {
	stop := func() {
		if o, live, _ := t.s.LiveOwner(); !live || o.PID != os.Getpid() {
			seat.Stop(t.s)
		}
	}
	stop()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		stop()
	}
}

func (t *tour) run() error {
	t.stage("seat init demo --harness sim (state in %s)", t.home)
	if err := seat.InitConfig(t.s, "sim", t.work, map[string]string{
		"PANTTY_SIM_STARTUP": "200ms", "PANTTY_SIM_TURN": "300ms"}); err != nil {
		return err
	}
	t.stage("seat start demo: the harness in a private tmux server, a driver holding owner.lock")
	p, err := seat.Start(t.s, seat.StartOptions{Pantty: t.pantty, Progress: func(l string) { t.say("%s", l) }})
	if err != nil {
		return err
	}
	t.say("ready: holder %s, session %s", p.Holder, p.Session)
	t.status()

	t.stage("seat send: three board messages, two of them hostile")
	texts := []string{"Please summarise the open pull requests.", "/clear", "!touch " + filepath.Join(t.work, "pwned")}
	var ids []string
	for i, text := range texts {
		res, err := t.s.Enqueue(guard.Message{ID: fmt.Sprintf("demo-%d", i+1), From: "alice", Board: "ops", Text: text}, 0, time.Now())
		if err != nil {
			return err
		}
		ids = append(ids, res.ID)
		t.say("%s  %q", res.ID, text)
	}
	if err := t.settle(ids...); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(t.work, "pwned")); err == nil {
		return errors.New("the hostile '!touch' ran: the guard failed")
	}
	t.say("no file was created and the session was not cleared; what reached the model (the simulator's request log):")
	t.showRequests(3)
	t.status()

	t.stage("compaction cycle: materialize the handoff, /compact at a boundary pantty chose, re-inject")
	if _, err := t.s.Handoff().AddNote("procedure: run the linter before the tests", time.Now()); err != nil {
		return err
	}
	res, err := t.s.Ask(state.Request{Kind: state.CtlCompact, Args: "keep the review procedure"}, 2*time.Minute)
	if err != nil {
		return err
	}
	t.say("%s", res.Detail)
	if err := t.send("demo-4", "Next: review PR 43."); err != nil {
		return err
	}
	if inj := t.lastInjected(); strings.Contains(inj, "run the linter before the tests") {
		t.say("the first request after compaction carried the handoff: %q …", firstLine(inj))
	} else {
		return fmt.Errorf("the handoff was not re-injected after compaction (injected %q)", inj)
	}
	t.status()

	t.stage("kill the harness (SIGKILL): the driver relaunches it on the same session")
	before, err := t.s.SessionFile().Read()
	if err != nil {
		return err
	}
	syscall.Kill(before.PanePID, syscall.SIGKILL)
	if err := t.waitRelaunch(before, 60*time.Second); err != nil {
		return err
	}
	after, _ := t.s.SessionFile().Read()
	t.say("harness pid %d → %d, session %s → %s (resumed: %v)", before.PanePID, after.PanePID, before.ID, after.ID, after.Resumed)
	if out, err := exec.CommandContext(t.ctx, t.pantty, "--home", t.home, "recover", "--dry-run").CombinedOutput(); err == nil {
		t.say("pantty recover --dry-run: %s", firstLine(string(out)))
	}
	if err := t.send("demo-5", "Carry on with the review."); err != nil {
		return err
	}
	t.say("the next request carried the earlier conversation: %d earlier turns", t.lastHistory())
	t.status()
	return nil
}

// send stores one board message and waits for it to be final.
func (t *tour) send(id, text string) error {
	if _, err := t.s.Enqueue(guard.Message{ID: id, From: "alice", Text: text}, 0, time.Now()); err != nil {
		return err
	}
	t.say("%s  %q", id, text)
	return t.settle(id)
}

// settle waits until the messages are final, the cursor has passed the last
// one and the driver is back at idle, so the status shown after is the seat at
// rest (fsnotify on the seat directory).
func (t *tour) settle(ids ...string) error {
	if err := seat.WaitFinal(t.s, ids, 60*time.Second); err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	w.Add(t.s.Dir)
	deadline := time.After(10 * time.Second)
	for {
		c, err1 := t.s.CursorFile().Read()
		hb, err2 := t.s.HeartbeatFile().Read()
		if err1 == nil && err2 == nil && c.ID == ids[len(ids)-1] && hb.Phase == state.PhaseIdle {
			return nil
		}
		select {
		case <-w.Events:
		case <-deadline:
			return nil // the status shown will say what is still moving
		}
	}
}

// waitRelaunch waits (fsnotify on the seat directory) for a new harness process
// on the same session and a driver back at idle.
func (t *tour) waitRelaunch(before state.Session, limit time.Duration) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	w.Add(t.s.Dir)
	deadline := time.After(limit)
	for {
		s, err1 := t.s.SessionFile().Read()
		hb, err2 := t.s.HeartbeatFile().Read()
		if err1 == nil && err2 == nil && s.PanePID != before.PanePID && s.ID == before.ID && hb.Phase == state.PhaseIdle {
			return nil
		}
		select {
		case <-w.Events:
		case <-deadline:
			return fmt.Errorf("the harness was not relaunched within %s; see %s", limit, t.s.DriverLogPath())
		}
	}
}

type simRequest struct {
	Kind         string `json:"kind"`
	NewInput     string `json:"new_input"`
	Injected     string `json:"injected"`
	HistoryTurns int    `json:"history_turns"`
}

func (t *tour) requests() []simRequest {
	f, err := os.Open(filepath.Join(t.s.HarnessDir(), "requests.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []simRequest
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r simRequest
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

func (t *tour) showRequests(n int) {
	rs := t.requests()
	if len(rs) > n {
		rs = rs[len(rs)-n:]
	}
	for _, r := range rs {
		lines := strings.Split(r.NewInput, "\n")
		t.say("[%s] %s", r.Kind, lines[0])
		for _, l := range lines[1:] {
			t.say("       %s", l)
		}
	}
}

func (t *tour) lastTurn() simRequest {
	rs := t.requests()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Kind == "turn" {
			return rs[i]
		}
	}
	return simRequest{}
}

func (t *tour) lastInjected() string { return t.lastTurn().Injected }
func (t *tour) lastHistory() int     { return t.lastTurn().HistoryTurns }

func firstLine(s string) string {
	return strings.TrimSpace(strings.SplitN(strings.TrimSpace(s), "\n", 2)[0])
}
