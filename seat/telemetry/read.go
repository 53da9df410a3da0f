package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// Reader takes readings. Its zero value reads recover's files with
// ReadRecoverFiles; recover/ may supply its own reader (see RecoverReader).
type Reader struct {
	// Recover reads what the recovery layer recorded about a seat; nil means
	// ReadRecoverFiles.
	Recover RecoverReader
}

// Read returns one Row per seat under home, in name order. The error is only
// for a state root that cannot be listed; everything wrong with one seat's
// records is reported inside its Row.
func Read(home string, now time.Time) ([]Row, error) { return Reader{}.Read(home, now) }

// ReadSeat returns the Row of one seat; an unknown seat wraps state.ErrUnknownSeat
// and a bad name state.ErrBadInput.
func ReadSeat(home, name string, now time.Time) (Row, error) {
	return Reader{}.ReadSeat(home, name, now)
}

// Read is the package-level Read with this Reader's recover source.
func (r Reader) Read(home string, now time.Time) ([]Row, error) {
	names, err := state.List(home)
	if err != nil {
		return nil, fmt.Errorf("%w: list seats in %s: %v", state.ErrUnobservable, home, err)
	}
	// A seat's readings depend on its own files only, so the seats are read
	// concurrently (over many seats, status is bound by file reads and TOML
	// decoding); the rows keep the name order.
	read := make([]Row, len(names))
	errs := make([]error, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(len(names), readWorkers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				read[i], errs[i] = r.ReadSeat(home, names[i], now)
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	rows := make([]Row, 0, len(names))
	for i, row := range read {
		if errors.Is(errs[i], state.ErrUnknownSeat) {
			continue // removed between the listing and the read
		}
		if errs[i] != nil {
			return nil, errs[i]
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// readWorkers bounds the goroutines reading seats at once.
const readWorkers = 8

// ReadSeat is the package-level ReadSeat with this Reader's recover source.
func (r Reader) ReadSeat(home, name string, now time.Time) (Row, error) {
	s, err := state.Existing(home, name)
	if err != nil {
		return Row{}, err
	}
	return r.row(s, now), nil
}

// row takes every reading of one seat. The order matters only where one reading
// binds another: the session id binds context, model and turn ends.
func (r Reader) row(s state.Seat, now time.Time) Row {
	row := Row{Seat: s.Name}
	cfg, cfgErr := s.ConfigFile().Read()

	sess, sessErr := s.SessionFile().Read()
	haveSess := sessErr == nil && sess.ID != ""
	evs := newEvents(s)
	// launch.toml binds the session id and names the rung: read once.
	launch, launchErr := s.LaunchFile().Read()
	row.Session = readSession(evs, sess, sessErr, launch, launchErr, now)
	row.Harness = readHarness(cfg, cfgErr, sess, haveSess)
	row.Shape = readShape(cfg, cfgErr)
	row.Transport = readTransport(cfg, cfgErr, sess)
	row.Intent = readIntent(s, now)

	owner, ownerErr := s.OwnerFile().Read()
	row.Driver = readDriver(owner, ownerErr, now)
	row.Heartbeat = readHeartbeat(s, owner, ownerErr, now)

	inbox, entErr := readView(s)
	row.Inbox = readInbox(inbox, entErr, now)
	row.Inbox.addTotals(s, inbox)
	row.InFlight = readInFlight(inbox.Open, entErr, now)
	row.Cursor = readCursor(s, inbox, entErr, now)

	ctx, ctxErr := s.ContextFile().Read()
	turnEnd := readLastTurnEnd(evs, sess, haveSess, s, inbox, ctx, ctxErr, now)
	row.LastTurnEnd = turnEnd
	row.Context = readContext(ctx, ctxErr, sess, haveSess, turnEnd, now)
	row.Model = readModel(evs, sess, haveSess, ctx, ctxErr, now)

	row.Health = r.healthOf(s, now)
	row.Ladder = readLadder(s, launch, launchErr, now)
	row.ProviderWaits = readWaits(s, cfg, cfgErr, inbox.Open, entErr, now)
	row.Compaction = readCompaction(s, now)
	row.Mode = readMode(s, cfg, cfgErr, now)
	row.LastExit = readLastExit(s, sess, haveSess, now)
	row.Activity = readActivity(s, cfg, cfgErr, sess, haveSess, now)
	row.Done = readDone(s, now)
	row.Isolation = readIsolation(s, now)
	return row
}

func readDone(s state.Seat, now time.Time) Done {
	c, err := s.CleanupFile().Read()
	if errors.Is(err, fs.ErrNotExist) {
		return Done{Meta: Meta{State: Known, Bound: "cleanup.toml absent: no seat done pending"}, Pending: ptr(false), Attempts: ptr(0), LastError: ptr("")}
	}
	if err != nil {
		return Done{Meta: missing(err, "")}
	}
	return Done{Meta: meta(Known, "", "cleanup.toml (left by "+c.By+"; recover removes it after the teardown)", c.RequestedAt, now),
		Pending: ptr(true), Attempts: ptr(c.Attempts), LastError: ptr(c.LastError)}
}

// meta builds a reading in state, recorded at t (zero t: no time known).
func meta(state, why, bound string, t time.Time, now time.Time) Meta {
	m := Meta{State: state, Why: why, Bound: bound}
	if !t.IsZero() {
		at := t.UTC()
		m.At = &at
		m.AgeSeconds = ptr(ageSeconds(now.Sub(t)))
	}
	return m
}

// ageSeconds rounds an age to milliseconds, so JSON stays readable.
func ageSeconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// missing turns a read error into an unknown reading (the file is absent) or an
// error reading (it exists but is unreadable or corrupt: reported, never replaced).
func missing(err error, why string) Meta {
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{State: Unknown, Why: why}
	}
	return Meta{State: Error, Why: err.Error()}
}

func readHarness(cfg config.Config, cfgErr error, sess state.Session, haveSess bool) Text {
	if haveSess && sess.Harness != "" {
		return Text{Meta: Meta{State: Known, Bound: "session.toml harness (recorded by the driver at launch)"}, Value: ptr(sess.Harness)}
	}
	if cfgErr != nil {
		return Text{Meta: missing(cfgErr, "no session.toml and no readable seat.toml")}
	}
	return Text{Meta: Meta{State: Known, Bound: "seat.toml harness (declared; no session recorded yet)"}, Value: ptr(cfg.Harness)}
}

func readShape(cfg config.Config, cfgErr error) Text {
	if cfgErr != nil {
		return Text{Meta: missing(cfgErr, "no seat.toml")}
	}
	if cfg.Shape == "" {
		return Text{Meta: Meta{State: Known, Bound: "seat.toml (no shape key: the default, resident)"}, Value: ptr("resident")}
	}
	return Text{Meta: Meta{State: Known, Bound: "seat.toml shape (declared: the shape the driver runs the seat in)"}, Value: ptr(cfg.Shape)}
}

// readTransport is how the driver reaches the harness: seat.toml's
// transport (tmux when it names none; config.Validate fills it in), or for
// transport = "auto" the path its driver chose at its last start, from
// session.toml: "app-server (auto)", with the choice's reason as the bound.
func readTransport(cfg config.Config, cfgErr error, sess state.Session) Text {
	if cfgErr != nil {
		return Text{Meta: missing(cfgErr, "no seat.toml")}
	}
	bound := "seat.toml transport (declared: tmux pastes into the harness's TUI in a pane, app-server submits turns to Codex's app server)"
	switch {
	case cfg.Transport != config.TransportAuto:
	case sess.Transport == "":
		bound = "seat.toml transport = \"auto\", not resolved yet: its driver resolves it at its start (session.toml)"
	default:
		bound = "session.toml transport, chosen by its driver for transport = \"auto\": " + sess.TransportWhy
	}
	return Text{Meta: Meta{State: Known, Bound: bound}, Value: ptr(state.TransportLabel(cfg, sess))}
}

func readIntent(s state.Seat, now time.Time) Text {
	in, err := s.IntentFile().Read()
	if err != nil {
		return Text{Meta: missing(err, "no intent.toml: the seat was never started or stopped")}
	}
	bound := "intent.toml"
	if in.By != "" {
		bound += " (recorded by " + in.By + ")"
	}
	return Text{Meta: meta(Known, "", bound, in.At, now), Value: ptr(in.Want)}
}

func readSession(evs *events, sess state.Session, err error, launch state.LaunchFile, launchErr error, now time.Time) Session {
	if err != nil {
		return Session{Meta: missing(err, "no session.toml: the seat has never been launched")}
	}
	if sess.ID == "" {
		return Session{Meta: Meta{State: Unknown, Why: "session.toml holds no session id yet"}}
	}
	out := Session{
		ID: ptr(sess.ID), Harness: ptr(sess.Harness), Generation: ptr(sess.Generation),
		GenerationWhy: ptr(sess.Why), Launches: ptr(sess.Launches), Resumed: ptr(sess.Resumed),
	}
	if !sess.LaunchedAt.IsZero() {
		out.LaunchedAt = ptr(sess.LaunchedAt.UTC())
	}
	bound := "session.toml id; " + howBound(launch, launchErr, sess.ID)
	if ev, dir, ok := evs.last(hookwire.EvSessionStart, sess.ID); ok {
		out.ConfirmedBy = ptr(dir + "/" + ev.File)
		bound += "; confirmed by the harness's SessionStart " + dir + "/" + ev.File + " carrying the same session_id"
	} else {
		bound += "; no SessionStart from the harness carries it yet"
	}
	out.Meta = meta(Known, "", bound, sess.LaunchedAt, now)
	return out
}

// howBound tells from launch.toml how the session id reached the harness: a
// pantty-chosen id is on the launch argv; an id the harness assigned itself is
// not, and the driver recorded it from the harness's first turn end.
func howBound(l state.LaunchFile, err error, id string) string {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "no launch.toml shows how the harness got it"
		}
		return "launch.toml unreadable (" + err.Error() + ")"
	}
	for i, a := range l.Argv {
		for _, flag := range []string{"--session-id", "--resume", "-r"} {
			if (a == flag && i+1 < len(l.Argv) && l.Argv[i+1] == id) || a == flag+"="+id {
				return "pantty-chosen id: launch.toml passes " + flag + " " + id + " to the harness"
			}
		}
	}
	return "recorded by the driver from the harness (the id is not on launch.toml's argv)"
}

func readDriver(o state.Owner, err error, now time.Time) Driver {
	if err != nil {
		return Driver{Meta: missing(err, "no owner.toml: no driver has held this seat")}
	}
	d := Driver{Holder: ptr(o.Holder), PID: ptr(o.PID), Host: ptr(o.Host)}
	if !o.Started.IsZero() {
		d.Started = ptr(o.Started.UTC())
	}
	host, _ := os.Hostname()
	if o.Host != host {
		d.Meta = meta(Unknown, fmt.Sprintf("the holder was recorded on host %q and this is %q: its process cannot be checked from here", o.Host, host),
			"owner.toml", o.Started, now)
		return d
	}
	live := o.PID > 0 && procid.Alive(o.PID, o.PIDStart)
	d.Live = ptr(live)
	bound := fmt.Sprintf("owner.toml pid %d with start time %d (clock ticks); /proc/%d/stat ", o.PID, o.PIDStart, o.PID)
	why := ""
	if live {
		bound += "matches"
	} else {
		bound += "does not match"
		why = fmt.Sprintf("pid %d is gone or is another process now (start time differs)", o.PID)
	}
	d.Meta = meta(Known, why, bound, o.Started, now)
	return d
}

func readHeartbeat(s state.Seat, o state.Owner, ownerErr error, now time.Time) Heartbeat {
	hb, err := s.HeartbeatFile().Read()
	if err != nil {
		return Heartbeat{Meta: missing(err, "no heartbeat.toml: no driver loop has beaten")}
	}
	h := Heartbeat{Phase: ptr(hb.Phase), IntervalSeconds: ptr(hb.Interval.Seconds()), PID: ptr(hb.PID), Holder: ptr(hb.Holder)}
	if hb.Fault != "" {
		h.Fault, h.FaultCause, h.FaultSince = ptr(hb.Fault), ptr(hb.FaultCause), ptr(hb.FaultSince)
	}
	if hb.Waiting != "" {
		h.Waiting = ptr(hb.Waiting)
	}
	bound := fmt.Sprintf("heartbeat.toml written by the driver loop (pid %d, holder %s)", hb.PID, hb.Holder)
	switch {
	case ownerErr != nil:
		bound += "; no owner.toml to compare the holder with"
	case o.Holder == hb.Holder:
		bound += "; owner.toml names the same holder"
	default:
		bound += fmt.Sprintf("; owner.toml names holder %s (this beat is from an earlier driver)", o.Holder)
	}
	state, why := Known, ""
	if hb.Stale(now) {
		state = Stale
		why = fmt.Sprintf("last beat %s ago, beyond twice its declared interval of %s", roundAge(now.Sub(hb.At)), hb.Interval.Duration)
		// With a live driver, a stale beat may be a loop that cannot write
		// (a full or read-only state root), not a stuck one: probe. With
		// none it is just the last beat, and nothing is written for it.
		if ownerErr == nil && o.Live() {
			if err := s.StateUnwritable(); err != nil {
				why += "; state not writable: " + err.Error()
				h.Waiting = ptr("state not writable: " + err.Error())
			}
		}
	}
	h.Meta = meta(state, why, bound, hb.At, now)
	return h
}

// roundAge prints an age to the second (to the millisecond below a second).
func roundAge(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// maxEventReads bounds how many event files of one kind a reading opens while
// looking for the seat's session: retention keeps a week of events, and the
// newest matching one is almost always the first.
const maxEventReads = 256

// readFileNoLink reads a regular file the way every state reader does: no
// symlink followed, no FIFO waited on, at most 4 MiB (fsafe.ReadBounded).
func readFileNoLink(path string) ([]byte, error) {
	return fsafe.ReadBounded(path, 4<<20)
}
