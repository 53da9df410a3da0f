// Package synth builds synthetic healthy seats for the performance
// measurements (scripts/bench, the recover and telemetry benchmarks): many
// seats whose driver is one helper process — the caller — holding every
// owner.lock and writing every heartbeat, and whose harness panes are cheap
// `sleep` processes in ONE private tmux server. The state files are pantty's
// own types, so `pantty recover` classifies each seat ok and `pantty status`
// reads a plausible history, without a driver and a simulator per seat.
//
// It is measurement scaffolding, not a test double of a driver: nothing
// answers control requests and nothing delivers messages.
package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// Options describe one set of synthetic seats.
type Options struct {
	Home    string // state root; seats are created under Home/seats
	Work    string // the seats' workdir (must exist)
	N       int    // number of seats
	Prefix  string // seat names are Prefix + a zero-padded index; default "s"
	Socket  string // absolute tmux socket path for the panes; "" = no panes (status only)
	Pantty  string // recorded in launch.toml as the harness binary (cosmetic)
	History int    // processed messages per seat, each with its UserPromptSubmit and Stop events
	// Interval is the heartbeat interval the seats declare (default 30s).
	Interval time.Duration
}

// Set is a built set of synthetic seats, live while it is not closed: this
// process holds every owner.lock.
type Set struct {
	Opts  Options
	Names []string
	locks []*seat.Lock
	hb    []state.Heartbeat
	seats []state.Seat

	mu     sync.Mutex
	stop   chan struct{}
	done   chan struct{}
	tmuxOK bool
}

// Build creates the seats, their panes (one `sleep` per seat, all on one tmux
// server) and their state files, takes every owner lock and writes the first
// heartbeats.
func Build(o Options) (*Set, error) {
	if o.Prefix == "" {
		o.Prefix = "s"
	}
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	set := &Set{Opts: o}
	width := len(fmt.Sprint(o.N))
	for i := 0; i < o.N; i++ {
		set.Names = append(set.Names, fmt.Sprintf("%s%0*d", o.Prefix, width, i))
	}
	panes := map[string]tmux.Pane{}
	if o.Socket != "" {
		var err error
		if panes, err = makePanes(o.Socket, set.Names); err != nil {
			set.Close()
			return nil, err
		}
		set.tmuxOK = true
	}
	now := time.Now()
	for _, name := range set.Names {
		s, err := state.Open(o.Home, name)
		if err != nil {
			set.Close()
			return nil, err
		}
		if err := seat.InitConfig(s, "sim", o.Work, nil); err != nil {
			set.Close()
			return nil, err
		}
		lock, err := seat.Acquire(s)
		if err != nil {
			set.Close()
			return nil, fmt.Errorf("seat %s: %w", name, err)
		}
		set.locks = append(set.locks, lock)
		set.seats = append(set.seats, s)
		sess := state.Session{Harness: "sim", ID: state.NewSessionID(), Generation: 1, Why: "first start",
			Socket: o.Socket, TmuxName: name, Launches: 1, LaunchedAt: now.Add(-time.Hour).UTC()}
		if p, ok := panes[name]; ok {
			sess.PaneID, sess.PanePID = p.ID, p.PID
		}
		if err := seedFiles(s, o, sess, now); err != nil {
			set.Close()
			return nil, fmt.Errorf("seat %s: %w", name, err)
		}
		set.hb = append(set.hb, state.Heartbeat{Phase: state.PhaseIdle, Interval: config.Duration{Duration: o.Interval},
			PID: os.Getpid(), Holder: lock.Owner.Holder})
	}
	if err := set.Beat(); err != nil {
		set.Close()
		return nil, err
	}
	return set, nil
}

// Beat rewrites every heartbeat (as each driver's loop would).
func (set *Set) Beat() error {
	set.mu.Lock()
	defer set.mu.Unlock()
	now := time.Now().UTC()
	for i, s := range set.seats {
		hb := set.hb[i]
		hb.At = now
		if err := s.HeartbeatFile().Write(hb); err != nil {
			return err
		}
	}
	return nil
}

// BeatEvery keeps the heartbeats fresh until Close: for runs longer than a
// few heartbeat intervals.
func (set *Set) BeatEvery(d time.Duration) {
	set.stop, set.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(set.done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-set.stop:
				return
			case <-t.C:
				set.Beat()
			}
		}
	}()
}

// Close releases the locks and kills the panes' tmux server.
func (set *Set) Close() {
	if set.stop != nil {
		close(set.stop)
		<-set.done
		set.stop = nil
	}
	for _, l := range set.locks {
		l.Release()
	}
	set.locks = nil
	if set.Opts.Socket != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		tmux.New(set.Opts.Socket).KillServer(ctx)
	}
}

// seedFiles writes intent, session, launch and (History) a processed history
// with its events, the way a driver that ran History turns leaves them. They
// are written without fsync: this is set-up, and the measurements read them.
func seedFiles(s state.Seat, o Options, sess state.Session, now time.Time) error {
	put := func(path string, v any) error {
		var b bytes.Buffer
		if err := toml.NewEncoder(&b).Encode(v); err != nil {
			return err
		}
		return os.WriteFile(path, b.Bytes(), fsatomic.FileMode)
	}
	if err := put(s.IntentPath(), state.Intent{Want: state.IntentRunning, At: now.Add(-time.Hour).UTC(), By: "synth"}); err != nil {
		return err
	}
	if err := put(s.SessionPath(), sess); err != nil {
		return err
	}
	argv := []string{o.Pantty, "sim", "--settings", s.SettingsPath(), "--session-id", sess.ID}
	if err := put(s.LaunchPath(), state.LaunchFile{Argv: argv, Dir: o.Work, Env: map[string]string{}}); err != nil {
		return err
	}
	ev := func(t time.Time, kind string, payload map[string]any) error {
		payload["session_id"] = sess.ID
		payload["hook_event_name"] = kind
		p, _ := json.Marshal(payload)
		data, _ := json.Marshal(map[string]any{"event": kind, "received_at": t.UTC(), "payload": json.RawMessage(p)})
		name := fmt.Sprintf("%019d-%07d-%s.json", t.UnixNano(), os.Getpid(), kind)
		return os.WriteFile(filepath.Join(s.SeenDir(), name), append(data, '\n'), fsatomic.FileMode)
	}
	t := now.Add(-50 * time.Minute)
	if err := ev(t, hookwire.EvSessionStart, map[string]any{"source": "startup", "model": "sim-1"}); err != nil {
		return err
	}
	var last inbox.Cursor
	for j := 0; j < o.History; j++ {
		t = t.Add(time.Minute)
		id := fmt.Sprintf("m%04d", j)
		sub, err := guard.Guard(guard.Message{ID: id, From: "bench", Text: "synthetic message " + id}, guard.DefaultDispatchFacts)
		if err != nil {
			return err
		}
		st := inbox.Stored{ID: id, From: "bench", Text: "synthetic message " + id, Seq: t.UnixNano(), EnqueuedAt: t.UTC()}
		data, _ := json.MarshalIndent(st, "", "  ")
		if err := os.WriteFile(filepath.Join(s.MsgsDir(), id+".json"), append(data, '\n'), fsatomic.FileMode); err != nil {
			return err
		}
		pid := state.NewSessionID()
		upsAt, stopAt := t.Add(80*time.Millisecond), t.Add(2*time.Second)
		if err := ev(upsAt, hookwire.EvUserPromptSubmit, map[string]any{"prompt_id": pid, "prompt": sub.Text()}); err != nil {
			return err
		}
		if err := ev(stopAt, hookwire.EvStop, map[string]any{"prompt_id": pid, "last_assistant_message": "ok"}); err != nil {
			return err
		}
		upsName := fmt.Sprintf("%019d-%07d-%s.json", upsAt.UnixNano(), os.Getpid(), hookwire.EvUserPromptSubmit)
		stopName := fmt.Sprintf("%019d-%07d-%s.json", stopAt.UnixNano(), os.Getpid(), hookwire.EvStop)
		status := inbox.Status{ID: id, State: inbox.StateProcessed, Attempts: 1, Nonce: sub.Nonce(), PromptID: pid,
			SessionID: sess.ID, Evidence: upsName, TurnEnd: stopName, Reply: "ok",
			SubmittedAt: upsAt.UTC(), EndedAt: stopAt.UTC(), UpdatedAt: stopAt.UTC()}
		// A final status lives in inbox/processed/, written when the turn
		// ended: its modification time says so, as a driver's would.
		final := filepath.Join(s.ProcessedDir(), id+".toml")
		if err := put(final, status); err != nil {
			return err
		}
		if err := os.Chtimes(final, stopAt, stopAt); err != nil {
			return err
		}
		last = inbox.Cursor{Seq: st.Seq, ID: id, State: inbox.StateProcessed, ClosedBy: stopName, Closed: j + 1, Updated: stopAt.UTC()}
	}
	if o.History > 0 {
		if err := put(s.CursorPath(), last); err != nil {
			return err
		}
		c := state.Context{SessionID: sess.ID, Occupancy: 14000, Floor: 12000, Reclaimable: 2000, Window: 200000,
			Source: "statusline", FloorSource: "first request", ReadAt: t.Add(2 * time.Second).UTC(),
			LastTurnEnd: t.Add(2 * time.Second).UTC(), Model: "sim-1"}
		if err := put(filepath.Join(s.Dir, "context.toml"), c); err != nil {
			return err
		}
	}
	return nil
}

// makePanes starts one tmux server on socket with one session per name, each
// a single pane running `sleep infinity`, in batches of commands per tmux
// invocation, and returns each session's pane.
func makePanes(socket string, names []string) (map[string]tmux.Pane, error) {
	const batch = 50
	for i := 0; i < len(names); i += batch {
		var args []string
		for j := i; j < i+batch && j < len(names); j++ {
			if len(args) > 0 {
				args = append(args, ";")
			}
			args = append(args, "new-session", "-d", "-s", names[j], "-x", "80", "-y", "24", "sleep", "infinity")
		}
		cmd := exec.Command("tmux", append([]string{"-u", "-f", "/dev/null", "-S", socket}, args...)...)
		cmd.Env = cleanEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tmux new-session batch: %v: %s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps, err := tmux.New(socket).ListPanes(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]tmux.Pane{}
	for _, p := range ps {
		out[p.Session] = p
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("tmux: no pane for session %s", n)
		}
	}
	return out, nil
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}
