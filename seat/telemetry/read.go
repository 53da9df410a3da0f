package telemetry

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/seat"
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

// ReadSeat returns the Row of one seat; an unknown seat wraps seat.ErrUnknownSeat
// and a bad name seat.ErrBadInput.
func ReadSeat(home, name string, now time.Time) (Row, error) {
	return Reader{}.ReadSeat(home, name, now)
}

// Read is the package-level Read with this Reader's recover source.
func (r Reader) Read(home string, now time.Time) ([]Row, error) {
	names, err := seat.List(home)
	if err != nil {
		return nil, fmt.Errorf("%w: list seats in %s: %v", seat.ErrUnobservable, home, err)
	}
	rows := make([]Row, 0, len(names))
	for _, n := range names {
		row, err := r.ReadSeat(home, n, now)
		if errors.Is(err, seat.ErrUnknownSeat) {
			continue // removed between the listing and the read
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// ReadSeat is the package-level ReadSeat with this Reader's recover source.
func (r Reader) ReadSeat(home, name string, now time.Time) (Row, error) {
	s, err := seat.Existing(home, name)
	if err != nil {
		return Row{}, err
	}
	return r.row(s, now), nil
}

// row takes every reading of one seat. The order matters only where one reading
// binds another: the session id binds context, model and turn ends.
func (r Reader) row(s seat.Seat, now time.Time) Row {
	row := Row{Seat: s.Name}
	var cfg seat.Config
	cfgErr := seat.ReadState(s.ConfigPath(), &cfg)

	sess, sessErr := s.ReadSession()
	haveSess := sessErr == nil && sess.ID != ""
	row.Session = readSession(s, sess, sessErr, now)
	row.Harness = readHarness(cfg, cfgErr, sess, haveSess)
	row.Shape = readShape(cfg, cfgErr)
	row.Intent = readIntent(s, now)

	owner, ownerErr := s.ReadOwner()
	row.Driver = readDriver(owner, ownerErr, now)
	row.Heartbeat = readHeartbeat(s, owner, ownerErr, now)

	entries, entErr := readEntries(s)
	row.Inbox = readInbox(entries, entErr, now)
	row.InFlight = readInFlight(entries, entErr, now)
	row.Cursor = readCursor(s, entries, entErr, now)

	ctx, ctxErr := s.ReadContext()
	turnEnd := readLastTurnEnd(s, sess, haveSess, entries, ctx, ctxErr, now)
	row.LastTurnEnd = turnEnd
	row.Context = readContext(ctx, ctxErr, sess, haveSess, turnEnd, now)
	row.Model = readModel(s, sess, haveSess, ctx, ctxErr, now)

	row.Health = r.healthOf(s, now)
	row.Ladder = readLadder(s, now)
	row.ProviderWaits = readWaits(s, cfg, cfgErr, entries, entErr, now)
	row.Compaction = readCompaction(s, now)
	row.Mode = readMode(s, cfg, cfgErr, now)
	row.Activity = readActivity(s, cfg, cfgErr, sess, haveSess, now)
	return row
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

func readHarness(cfg seat.Config, cfgErr error, sess seat.Session, haveSess bool) Text {
	if haveSess && sess.Harness != "" {
		return Text{Meta: Meta{State: Known, Bound: "session.toml harness (recorded by the driver at launch)"}, Value: ptr(sess.Harness)}
	}
	if cfgErr != nil {
		return Text{Meta: missing(cfgErr, "no session.toml and no readable seat.toml")}
	}
	return Text{Meta: Meta{State: Known, Bound: "seat.toml harness (declared; no session recorded yet)"}, Value: ptr(cfg.Harness)}
}

func readShape(cfg seat.Config, cfgErr error) Text {
	if cfgErr != nil {
		return Text{Meta: missing(cfgErr, "no seat.toml")}
	}
	if cfg.Shape == "" {
		return Text{Meta: Meta{State: Known, Bound: "seat.toml (no shape key: the default, resident)"}, Value: ptr("resident")}
	}
	return Text{Meta: Meta{State: Known, Bound: "seat.toml shape (declared: the shape the driver runs the seat in)"}, Value: ptr(cfg.Shape)}
}

func readIntent(s seat.Seat, now time.Time) Text {
	in, err := s.ReadIntent()
	if err != nil {
		return Text{Meta: missing(err, "no intent.toml: the seat was never started or stopped")}
	}
	bound := "intent.toml"
	if in.By != "" {
		bound += " (recorded by " + in.By + ")"
	}
	return Text{Meta: meta(Known, "", bound, in.At, now), Value: ptr(in.Want)}
}

func readSession(s seat.Seat, sess seat.Session, err error, now time.Time) Session {
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
	bound := "session.toml id; " + howBound(s, sess.ID)
	if ev, dir, ok := lastEvent(s, []string{seat.EvSessionStart}, sess.ID); ok {
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
func howBound(s seat.Seat, id string) string {
	var l seat.LaunchFile
	if err := seat.ReadState(s.LaunchPath(), &l); err != nil {
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

func readDriver(o seat.Owner, err error, now time.Time) Driver {
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
	live := o.PID > 0 && seat.ProcAlive(o.PID, o.PIDStart)
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

func readHeartbeat(s seat.Seat, o seat.Owner, ownerErr error, now time.Time) Heartbeat {
	hb, err := s.ReadHeartbeat()
	if err != nil {
		return Heartbeat{Meta: missing(err, "no heartbeat.toml: no driver loop has beaten")}
	}
	h := Heartbeat{Phase: ptr(hb.Phase), IntervalSeconds: ptr(hb.Interval.Seconds()), PID: ptr(hb.PID), Holder: ptr(hb.Holder)}
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

// entriesErr is the reason the inbox could not be read.
type entriesErr struct{ m Meta }

func (e entriesErr) Error() string { return e.m.Why }

// readEntries lists the inbox; an absent inbox is unknown, not empty: a seat
// that was never started or sent to has no inbox/msgs directory.
func readEntries(s seat.Seat) ([]seat.Entry, error) {
	if _, err := os.Stat(s.MsgsDir()); err != nil {
		return nil, entriesErr{missing(err, "no inbox/msgs: the seat has never been started or sent to")}
	}
	es, err := s.Entries()
	if err != nil {
		return nil, entriesErr{Meta{State: Error, Why: err.Error()}}
	}
	return es, nil
}

func entriesMeta(err error) Meta {
	var ee entriesErr
	if errors.As(err, &ee) {
		return ee.m
	}
	return Meta{State: Error, Why: err.Error()}
}

func readInbox(es []seat.Entry, err error, now time.Time) Inbox {
	if err != nil {
		return Inbox{Meta: entriesMeta(err)}
	}
	var depth, queued, failed, processed int
	var oldest time.Time
	for _, e := range es {
		switch e.Status.State {
		case seat.StateProcessed:
			processed++
		case seat.StateFailed:
			failed++
		default:
			depth++
			if e.Status.State == seat.StateQueued {
				queued++
				if oldest.IsZero() || e.Msg.EnqueuedAt.Before(oldest) {
					oldest = e.Msg.EnqueuedAt
				}
			}
		}
	}
	in := Inbox{Depth: ptr(depth), Queued: ptr(queued), Failed: ptr(failed), Processed: ptr(processed)}
	if !oldest.IsZero() {
		in.OldestQueuedSeconds = ptr(ageSeconds(now.Sub(oldest)))
	}
	in.Meta = Meta{State: Known, Bound: fmt.Sprintf("inbox/msgs and inbox/status of this seat (%d stored)", len(es))}
	return in
}

func readInFlight(es []seat.Entry, err error, now time.Time) InFlight {
	if err != nil {
		return InFlight{Meta: entriesMeta(err)}
	}
	for _, e := range es {
		st := e.Status
		if st.State != seat.StateSubmitting && st.State != seat.StateSubmitted {
			continue
		}
		since := st.SubmittedAt
		if since.IsZero() {
			since = st.UpdatedAt
		}
		bound := "inbox/status/" + e.Msg.ID + ".toml state " + st.State
		if st.SessionID != "" {
			bound += ", bound to session " + st.SessionID
		}
		if st.Evidence != "" {
			bound += " by " + st.Evidence
		}
		return InFlight{Meta: meta(Known, "", bound, since, now), ID: ptr(e.Msg.ID), MessageState: ptr(st.State), Attempts: ptr(st.Attempts)}
	}
	return InFlight{Meta: Meta{State: Known, Why: "no message is between paste and turn end", Bound: "inbox/status of this seat"}}
}

func readCursor(s seat.Seat, es []seat.Entry, entErr error, now time.Time) Cursor {
	c, err := s.ReadCursor()
	if err != nil {
		return Cursor{Meta: missing(err, "no cursor.toml: no message has been closed yet")}
	}
	out := Cursor{ID: ptr(c.ID), MessageState: ptr(c.State), Closed: ptr(c.Closed), ClosedBy: ptr(c.ClosedBy)}
	state, why := Known, ""
	if entErr == nil {
		if want, ok := seat.CursorOf(es); ok && want.ID != c.ID {
			state = Stale
			why = fmt.Sprintf("the message states put the cursor at %s; cursor.toml still says %s (the driver brings it up to date)", want.ID, c.ID)
		}
	}
	out.Meta = meta(state, why, "cursor.toml of this seat (written by its driver)", c.Updated, now)
	return out
}

// readLastTurnEnd finds the latest turn end of the seat's current session:
// the harness's own Stop hook event carrying the session id, the
// driver's processed messages bound to that session, and context.toml's record
// of it. The newest wins; its source is named.
func readLastTurnEnd(s seat.Seat, sess seat.Session, haveSess bool, es []seat.Entry, ctx seat.Context, ctxErr error, now time.Time) Meta {
	if !haveSess {
		return Meta{State: Unknown, Why: "no session id in session.toml: turn ends cannot be bound to this seat"}
	}
	var at time.Time
	var bound string
	// StopFailure is not counted: a refused turn added nothing to the context,
	// and counting it would mark a still-true reading stale.
	if ev, dir, ok := lastEvent(s, []string{seat.EvStop}, sess.ID); ok {
		at, bound = ev.ReceivedAt, fmt.Sprintf("the harness's %s hook event %s/%s, session_id matches session.toml", ev.Kind, dir, ev.File)
	}
	for _, e := range es {
		st := e.Status
		if st.State == seat.StateProcessed && st.SessionID == sess.ID && st.EndedAt.After(at) {
			at, bound = st.EndedAt, "inbox/status/"+e.Msg.ID+".toml ended_at (processed, session_id matches session.toml)"
		}
	}
	if ctxErr == nil && ctx.SessionID == sess.ID && ctx.LastTurnEnd.After(at) {
		at, bound = ctx.LastTurnEnd, "context.toml last_turn_end (session_id matches session.toml)"
	}
	if at.IsZero() {
		return Meta{State: Unknown, Why: "no turn end recorded for session " + sess.ID + " (no Stop event, no processed message)"}
	}
	return meta(Known, "", bound, at, now)
}

func readContext(c seat.Context, err error, sess seat.Session, haveSess bool, turnEnd Meta, now time.Time) Context {
	if err != nil {
		return Context{Meta: missing(err, "no context.toml: no status-line reading yet")}
	}
	if !haveSess {
		return Context{Meta: Meta{State: Unknown, Why: fmt.Sprintf("no session id in session.toml to bind context.toml's session %s to (not taken)", c.SessionID)}}
	}
	if c.SessionID != sess.ID {
		return Context{Meta: Meta{State: Unknown, Why: fmt.Sprintf("context.toml is a reading of session %s, not of this seat's session %s (not taken)", c.SessionID, sess.ID)}}
	}
	out := Context{Occupancy: ptr(c.Occupancy), Source: ptr(c.Source)}
	if c.Window > 0 {
		out.Window = ptr(c.Window)
		pct := float64(c.Occupancy) / float64(c.Window) * 100
		out.Percent = ptr(math.Round(pct*100) / 100)
		out.Step = ptr(StepOf(c.Occupancy, c.Window))
	}
	if c.FloorSource != "" {
		out.Floor, out.FloorSource = ptr(c.Floor), ptr(c.FloorSource)
		out.Reclaimable = ptr(c.Reclaimable)
	}
	state, why := Known, ""
	if c.FloorSource == "" {
		why = "the floor is not measured yet (it is read on the first request of a fresh session)"
	}
	if turnEnd.At != nil {
		out.LastTurnEnd = turnEnd.At
		if c.ReadAt.Before(*turnEnd.At) {
			state = Stale
			why = fmt.Sprintf("read at %s, before the last turn end at %s (the status line refreshes only on redraws)",
				c.ReadAt.UTC().Format(time.RFC3339Nano), turnEnd.At.Format(time.RFC3339Nano))
		}
	}
	out.Meta = meta(state, why, "context.toml session_id matches session.toml id "+sess.ID, c.ReadAt, now)
	return out
}

// StepOf quantizes an occupancy to 5 % steps of the window (rounding down):
// the unit in which watch reports a context change.
func StepOf(occupancy, window int) int {
	if window <= 0 {
		return 0
	}
	return occupancy * 100 / window / 5 * 5
}

// readModel takes the model from the harness's own records only, newest first:
// the latest status-line payload, context.toml's reading of it, and the last
// SessionStart event — each only when its session id is the seat's. seat.toml's
// model is a declaration and is never read here.
func readModel(s seat.Seat, sess seat.Session, haveSess bool, c seat.Context, ctxErr error, now time.Time) Text {
	if !haveSess {
		return Text{Meta: Meta{State: Unknown, Why: "no session id in session.toml: the harness's model reports cannot be bound to this seat"}}
	}
	var at time.Time
	var model, bound string
	var rejected []string
	consider := func(m string, t time.Time, b string) {
		if m != "" && (model == "" || t.After(at)) {
			model, at, bound = m, t, b
		}
	}
	if data, err := readFileNoLink(s.StatusLinePath()); err == nil {
		r, perr := seat.ParseStatusLine(data)
		switch {
		case perr != nil && !errors.Is(perr, seat.ErrNoUsage):
		case r.SessionID != sess.ID:
			rejected = append(rejected, "statusline.json is for session "+r.SessionID)
		default:
			if fi, err := os.Lstat(s.StatusLinePath()); err == nil {
				consider(r.Model, fi.ModTime(), "statusline.json model.id (the harness's latest status-line payload), session_id matches session.toml")
			}
		}
	}
	if ctxErr == nil {
		if c.SessionID == sess.ID {
			consider(c.Model, c.ReadAt, "context.toml model (from the harness's status line), session_id matches session.toml")
		} else if c.Model != "" {
			rejected = append(rejected, "context.toml is for session "+c.SessionID)
		}
	}
	if ev, dir, ok := lastEvent(s, []string{seat.EvSessionStart}, sess.ID); ok {
		consider(modelOf(ev.Fields.Model), ev.ReceivedAt, "the harness's SessionStart event "+dir+"/"+ev.File+" model field, session_id matches session.toml")
	}
	if model == "" {
		why := "the harness has not reported a model for session " + sess.ID + " (no status line, no SessionStart with a model)"
		if len(rejected) > 0 {
			why += "; not taken: " + strings.Join(rejected, ", ")
		}
		return Text{Meta: Meta{State: Unknown, Why: why}}
	}
	state, why := Known, ""
	if !sess.LaunchedAt.IsZero() && at.Before(sess.LaunchedAt) {
		state = Stale
		why = "reported before the current launch at " + sess.LaunchedAt.UTC().Format(time.RFC3339) + "; the harness has not reported its model since"
	}
	return Text{Meta: meta(state, why, bound, at, now), Value: ptr(model)}
}

// modelOf reads a hook payload's model field: a string, or an object with an id.
func modelOf(v any) string {
	switch m := v.(type) {
	case string:
		return m
	case map[string]any:
		if id, ok := m["id"].(string); ok {
			return id
		}
	}
	return ""
}

// maxEventReads bounds how many event files of one kind a reading opens while
// looking for the seat's session: retention keeps a week of events, and the
// newest matching one is almost always the first.
const maxEventReads = 256

// lastEvent finds the newest hook event of the given kinds whose session_id is
// sessionID, in events/ (not yet consumed) and events/seen/. Names sort in
// arrival order and carry the kind, so only candidate files are opened.
func lastEvent(s seat.Seat, kinds []string, sessionID string) (seat.Event, string, bool) {
	type cand struct{ name, dir, path string }
	var cands []cand
	for _, d := range []struct{ rel, path string }{{"events", s.EventsDir()}, {"events/seen", s.SeenDir()}} {
		ents, err := os.ReadDir(d.path)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			for _, k := range kinds {
				if strings.HasSuffix(e.Name(), "-"+k+".json") {
					cands = append(cands, cand{e.Name(), d.rel, filepath.Join(d.path, e.Name())})
				}
			}
		}
	}
	// Newest first by name (the arrival time in ns leads the name).
	sort.Slice(cands, func(i, j int) bool { return cands[i].name > cands[j].name })
	for i, c := range cands {
		if i >= maxEventReads {
			break
		}
		ev, err := seat.ReadEvent(c.path)
		if err != nil {
			continue // consumed (moved to seen/) between the listing and the read, or corrupt
		}
		if ev.Fields.SessionID == sessionID {
			return ev, c.dir, true
		}
	}
	return seat.Event{}, "", false
}

// readLadder reads the rung the pane was launched on and recover's floor.
func readLadder(s seat.Seat, now time.Time) Ladder {
	rung, err := s.LaunchedRung()
	if err != nil {
		return Ladder{Meta: missing(err, "no launch.toml: the harness was never launched")}
	}
	l := Ladder{Rung: ptr(rung)}
	bound := "launch.toml env " + seat.RungEnv + " (the rung the pane was last launched on)"
	why := ""
	var at time.Time
	rec, err := s.ReadRecovery()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "floor: no recover record (recovery.toml absent: recover has never had to act on this seat)"
	case err != nil:
		return Ladder{Meta: Meta{State: Error, Why: err.Error()}, Rung: ptr(rung)}
	default:
		l.Floor, l.MeansFailures, l.Failures = ptr(rec.Floor), ptr(rec.MeansFailures), ptr(rec.Failures)
		if rec.FloorWhy != "" {
			l.FloorWhy = ptr(rec.FloorWhy)
		}
		if !rec.NextAttempt.IsZero() {
			l.NextAttempt = ptr(rec.NextAttempt.UTC())
		}
		bound += "; floor from recovery.toml (written by recover)"
		at = rec.LastAt
	}
	l.Meta = meta(Known, why, bound, at, now)
	return l
}

// readWaits lists the provider waits that hold the seat: the active blocks in
// providers.toml on any provider of the seat's rungs (blocks are per provider,
// shared by every seat on it), and any message the driver re-queued after a
// refusal whose wait no such block covers (a block the driver could not write).
func readWaits(s seat.Seat, cfg seat.Config, cfgErr error, es []seat.Entry, entErr error, now time.Time) Waits {
	if cfgErr != nil {
		return Waits{Meta: missing(cfgErr, "no seat.toml: the seat's providers are not known")}
	}
	blocks, err := seat.ReadBlocks(s.Home)
	if err != nil {
		return Waits{Meta: Meta{State: Error, Why: err.Error()}}
	}
	top := cfg.Provider
	if top == "" {
		top = cfg.Harness
	}
	type use struct{ provider, rung string }
	uses := []use{{top, ""}}
	for _, r := range cfg.Ladder {
		p := r.Provider
		if p == "" {
			p = top
		}
		uses = append(uses, use{p, r.Name})
	}
	ws := []Wait{}
	seen := map[string]bool{}
	var names []string
	for _, u := range uses {
		if seen[u.provider] {
			continue
		}
		seen[u.provider] = true
		names = append(names, u.provider)
		b, ok := blocks.Active(u.provider, now)
		if !ok {
			continue
		}
		of := "the seat's provider"
		if u.rung != "" {
			of = "provider of rung " + u.rung
		}
		bound := fmt.Sprintf("providers.toml [%s] (%s in seat.toml)", u.provider, of)
		if b.Seat != "" {
			bound += ", refused on seat " + b.Seat
		}
		reason := b.Error
		if b.Text != "" {
			reason += ": " + b.Text
		}
		if !b.Parsed {
			reason += " (no reset time in the refusal: re-probed at this time)"
		}
		ws = append(ws, Wait{Provider: u.provider, Until: b.Until.UTC(), Reason: reason, Bound: bound})
	}
	for _, e := range es {
		st := e.Status
		if st.State != seat.StateQueued || st.Reason != seat.ReasonProviderRefusal || !st.NotBefore.After(now) {
			continue
		}
		covered := false
		for _, w := range ws {
			covered = covered || !w.Until.Before(st.NotBefore)
		}
		if !covered {
			ws = append(ws, Wait{Provider: top, Until: st.NotBefore.UTC(), Reason: st.Detail,
				Bound: "inbox/status/" + e.Msg.ID + ".toml not_before (the driver re-queued it after a refusal; no providers.toml block covers it)"})
		}
	}
	bound := "providers.toml blocks on the seat's providers (" + strings.Join(names, ", ") + ") and its re-queued messages"
	why := ""
	if _, err := os.Lstat(seat.ProvidersPath(s.Home)); errors.Is(err, fs.ErrNotExist) {
		why = "providers.toml absent: no provider block has been recorded"
	}
	if entErr != nil {
		why = strings.TrimPrefix(why+"; inbox unreadable, re-queued messages not checked: "+entErr.Error(), "; ")
	}
	return Waits{Meta: Meta{State: Known, Why: why, Bound: bound}, Waits: ws}
}

func readCompaction(s seat.Seat, now time.Time) Compaction {
	c, err := s.ReadCycle()
	if err != nil {
		return Compaction{Meta: missing(err, "no handoff/cycle.toml: no compaction cycle has run")}
	}
	out := Compaction{ID: ptr(c.ID), CycleState: ptr(c.State), Reason: ptr(c.Reason)}
	if !c.Requested.IsZero() {
		out.Requested = ptr(c.Requested.UTC())
	}
	at := c.Requested
	if !c.Ended.IsZero() {
		out.Ended = ptr(c.Ended.UTC())
		at = c.Ended
	}
	if c.Before > 0 {
		out.Before = ptr(c.Before)
	}
	if c.After > 0 {
		out.After = ptr(c.After)
	}
	if c.Error != "" {
		out.Error = ptr(c.Error)
	}
	out.Meta = meta(Known, "", "handoff/cycle.toml of this seat (written by its driver)", at, now)
	return out
}

// readFileNoLink reads a regular file, refusing a symlink like every state reader.
func readFileNoLink(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file (refused)", path)
	}
	return os.ReadFile(path)
}

// readMode reports direct or relay from mode.toml (what the driver observed of
// people at the pane), or that the seat ignores people attaching.
func readMode(s seat.Seat, cfg seat.Config, cfgErr error, now time.Time) Text {
	if cfgErr == nil && cfg.Relay == seat.RelayIgnore {
		return Text{Meta: Meta{State: Known, Bound: "seat.toml relay = \"ignore\": people attach only to watch"}, Value: ptr(seat.ModeDirect)}
	}
	m, err := s.ReadMode()
	if err != nil {
		return Text{Meta: missing(err, "no mode.toml: no person has been observed at the pane")}
	}
	v, why := m.Mode, m.Why
	if m.Draft != "" {
		v = m.Mode + " (held by a draft)"
	}
	return Text{Meta: meta(Known, "", "mode.toml ("+why+")", m.Since, now), Value: ptr(v)}
}

// readActivity reports the current tool call; it says when activity is off, and
// that switching takes effect at the harness's next launch.
func readActivity(s seat.Seat, cfg seat.Config, cfgErr error, sess seat.Session, haveSess bool, now time.Time) Activity {
	if cfgErr == nil && !cfg.Activity {
		return Activity{Meta: Meta{State: Unknown, Why: "activity is off in seat.toml (turning it on takes effect at the harness's next launch)"}}
	}
	a, err := s.ReadActivity()
	if err != nil {
		why := "no activity.toml: no tool call recorded"
		if haveSess && !sess.LaunchedAt.IsZero() {
			why += " (activity applies from the launch after it was turned on)"
		}
		return Activity{Meta: missing(err, why)}
	}
	if now.Sub(a.At) > seat.ActivityQuiet {
		return Activity{Meta: meta(Stale, "quiet for longer than "+seat.ActivityQuiet.String(), "activity.toml (PreToolUse/PostToolUse hooks)", a.At, now)}
	}
	return Activity{Meta: meta(Known, "", "activity.toml (PreToolUse/PostToolUse hooks)", a.At, now), Tool: ptr(a.Tool), What: ptr(a.What), Phase: ptr(a.Phase)}
}
