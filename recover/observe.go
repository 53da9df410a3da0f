package recover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// observation is everything one sweep saw of one seat: its state files (read
// without taking any lock) and its pane in the one tmux snapshot of its socket.
// Nothing in it is a default standing in for a file that could not be read: an
// unreadable file is listed in unreadable and makes the verdict unknown.
type observation struct {
	s   state.Seat
	now time.Time

	intent    state.Intent
	hasIntent bool
	cfg       config.Config
	owner     state.Owner
	hasOwner  bool
	ownerLive bool
	lockFree  bool // /proc/locks shows no holder of owner.lock
	hb        state.Heartbeat
	hasHB     bool
	sess      state.Session
	hasSess   bool
	rec       state.Recovery
	prev      state.Health
	hasPrev   bool
	inbox     inbox.View // Open: the messages not final; Final: references, decoded on demand
	launched  string     // the rung launch.toml records
	exit      state.HarnessExit
	hasExit   bool // harness-exit.toml: the harness's last exit and its words
	plan      outage.Plan
	spawned   int // the driver pid this sweep's recovery started, 0 if none

	pendingEvents int           // hook events the driver has not consumed yet
	oldestEvent   time.Duration // the age of the oldest of them

	socket  string
	panes   []tmux.Pane // the socket's snapshot
	tmuxErr error       // the snapshot's error (ErrNoServer: the server is gone)
	pane    *tmux.Pane  // the seat's pane (session.toml's pane id in its session)

	unreadable []string
	// unwritable is what a write into the seat's state meets now (a full
	// or read-only state root), probed only when the heartbeat is stale.
	unwritable error
}

// readFiles reads the seat's state files. It stops after intent.toml when the
// seat is not meant to run: a stopped seat is left alone, not even observed.
func readFiles(s state.Seat, now time.Time, blocks state.Blocks) *observation {
	o := &observation{s: s, now: now}
	bad := func(what string, err error) {
		o.unreadable = append(o.unreadable, fmt.Sprintf("%s: %v", what, err))
	}
	var err error
	switch o.intent, err = s.IntentFile().Read(); {
	case errors.Is(err, fs.ErrNotExist):
		return o
	case err != nil:
		bad("intent.toml", err)
		return o
	}
	o.hasIntent = true
	if o.intent.Want != state.IntentRunning {
		return o
	}
	if o.cfg, err = s.LoadConfig(); err != nil {
		bad("seat.toml", err)
	}
	if o.hasOwner, err = readOptional(s.OwnerFile(), &o.owner); err != nil {
		bad("owner.toml", err)
	}
	o.ownerLive = o.hasOwner && o.owner.Live()
	o.lockFree = seat.WaitFree(s, 0)
	if o.hasHB, err = readOptional(s.HeartbeatFile(), &o.hb); err != nil {
		bad("heartbeat.toml", err)
	}
	if o.hasSess, err = readOptional(s.SessionFile(), &o.sess); err != nil {
		bad("session.toml", err)
	}
	if _, err = readOptional(s.RecoveryFile(), &o.rec); err != nil {
		bad("recovery.toml", err)
	}
	if o.hasPrev, err = readOptional(state.HealthFile(s), &o.prev); err != nil {
		bad("health.toml", err)
	}
	if o.inbox, err = s.View(); err != nil {
		bad("inbox", err)
	}
	if o.hasExit, err = readOptional(s.HarnessExitFile(), &o.exit); err != nil {
		bad("harness-exit.toml", err)
	}
	if r, err := outage.LaunchedRung(s); err == nil {
		o.launched = r
	}
	if names, err := s.PendingEvents(); err != nil {
		bad("events/", err)
	} else if len(names) > 0 {
		o.pendingEvents = len(names)
		if t, ok := state.EventTime(names[0]); ok {
			o.oldestEvent = now.Sub(t)
		}
	}
	if o.ownerLive && (!o.ours() || o.hbStale()) {
		// A live driver without a fresh heartbeat: a wedged loop, or one that
		// cannot write. Only a write tells them apart.
		o.unwritable = s.StateUnwritable()
	}
	if o.cfg.Name != "" {
		o.plan = outage.PlanFor(o.cfg, o.rec.Floor, blocks, now)
		if o.hasSess && o.sess.Socket != "" {
			o.socket = o.sess.Socket
		} else if sock, err := state.SocketFor(o.cfg); err == nil {
			o.socket = sock
		}
	}
	return o
}

// needsTmux reports whether the verdict depends on the seat's pane.
func (o *observation) needsTmux() bool {
	return o.hasIntent && o.intent.Want == state.IntentRunning && len(o.unreadable) == 0 && o.socket != "" && o.hasSess
}

// attach binds the seat to its pane in the socket's snapshot.
func (o *observation) attach(panes []tmux.Pane, err error) {
	o.panes, o.tmuxErr, o.pane = panes, err, nil
	if err != nil {
		return
	}
	for i := range panes {
		if panes[i].Session == o.sess.TmuxName && panes[i].ID == o.sess.PaneID {
			o.pane = &panes[i]
		}
	}
}

// tmuxTimeout bounds the one list-panes call per socket.
const tmuxTimeout = 5 * time.Second

// snapshot lists every pane on a socket in ONE tmux call, shared by all the
// seats on that socket.
func (sw *sweeper) snapshot(socket string) ([]tmux.Pane, error) {
	if snap, ok := sw.snaps[socket]; ok {
		return snap.panes, snap.err
	}
	panes, err := sw.listPanes(socket)
	sw.snaps[socket] = paneSnap{panes, err}
	return panes, err
}

// listPanes is the sweep's only way to ask tmux what runs; it counts the calls.
func (sw *sweeper) listPanes(socket string) ([]tmux.Pane, error) {
	sw.tmuxCalls++
	c := tmux.New(socket)
	c.Timeout = tmuxTimeout
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	return c.ListPanes(ctx)
}

type paneSnap struct {
	panes []tmux.Pane
	err   error
}

// heartbeat staleness: a heartbeat older than staleIntervals times the
// interval it declares means the work loop is not running, whatever the process
// table says. One missed tick is noise (a slow tmux call inside the loop); three
// are not.
const staleIntervals = 3

func (o *observation) interval() time.Duration {
	if o.hasHB && o.hb.Interval.Duration > 0 {
		return o.hb.Interval.Duration
	}
	if o.cfg.HeartbeatInterval.Duration > 0 {
		return o.cfg.HeartbeatInterval.Duration
	}
	return config.DefaultHeartbeatInterval
}

func (o *observation) hbAge() time.Duration { return o.now.Sub(o.hb.At) }

func (o *observation) hbStale() bool { return o.hbAge() > staleIntervals*o.interval() }

// ours reports whether the heartbeat was written by the recorded owner.
func (o *observation) ours() bool { return o.hasHB && o.hasOwner && o.hb.Holder == o.owner.Holder }

// inFlight is the message between paste and turn end, if any.
func (o *observation) inFlight() *inbox.Entry {
	for i := range o.inbox.Open {
		switch o.inbox.Open[i].Status.State {
		case inbox.StateSubmitting, inbox.StateSubmitted:
			return &o.inbox.Open[i]
		}
	}
	return nil
}

// oldestQueued is the first queued message in queue order, if any.
func (o *observation) oldestQueued() *inbox.Entry {
	for i := range o.inbox.Open {
		if o.inbox.Open[i].Status.State == inbox.StateQueued {
			return &o.inbox.Open[i]
		}
	}
	return nil
}

// lastProgress is when the seat last closed a message: the ended_at of the
// final status written last.
func (o *observation) lastProgress() time.Time {
	r, ok := o.inbox.Newest("")
	if !ok {
		return time.Time{}
	}
	if e, ok := o.s.ReadFinal(o.inbox, r); ok && e.SetAside == "" {
		return e.Status.EndedAt
	}
	return r.At
}

// goodTurns counts messages processed after t. A status written before t
// cannot hold a later end, so only the ones written after it are decoded.
func (o *observation) goodTurns(after time.Time) int {
	n := 0
	for _, r := range o.inbox.Final {
		if r.State != inbox.StateProcessed || !r.At.After(after) {
			continue
		}
		if e, ok := o.s.ReadFinal(o.inbox, r); ok && e.Status.State == inbox.StateProcessed && e.Status.EndedAt.After(after) {
			n++
		}
	}
	return n
}

// phaseStarting reports a driver still waiting for its harness to come up.
func (o *observation) phaseStarting() bool {
	return o.hb.Phase == state.PhaseStarting || o.hb.Phase == state.PhaseRelaunching
}

func (o *observation) paneText() string {
	switch {
	case o.tmuxErr != nil:
		return "tmux: " + o.tmuxErr.Error()
	case o.pane == nil:
		return fmt.Sprintf("no pane %s in session %s", o.sess.PaneID, o.sess.TmuxName)
	case o.pane.Dead:
		return fmt.Sprintf("pane %s dead (status %d, signal %d)", o.pane.ID, o.pane.DeadStatus, o.pane.DeadSignal)
	default:
		return fmt.Sprintf("pane %s pid %d", o.pane.ID, o.pane.PID)
	}
}

func shortDur(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
