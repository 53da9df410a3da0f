package telemetry

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// entriesErr is the reason the inbox could not be read.
type entriesErr struct{ m Meta }

func (e entriesErr) Error() string { return e.m.Why }

// readView reads the inbox, decoding only the open messages; an absent inbox
// is unknown, not empty: a seat that was never started or sent to has no
// inbox/msgs directory.
func readView(s state.Seat) (inbox.View, error) {
	if _, err := os.Stat(s.MsgsDir()); err != nil {
		return inbox.View{}, entriesErr{missing(err, "no inbox/msgs: the seat has never been started or sent to")}
	}
	v, err := s.View()
	if err != nil {
		return inbox.View{}, entriesErr{Meta{State: Error, Why: err.Error()}}
	}
	return v, nil
}

func entriesMeta(err error) Meta {
	var ee entriesErr
	if errors.As(err, &ee) {
		return ee.m
	}
	return Meta{State: Error, Why: err.Error()}
}

// addTotals fills what the inbox has finished ever (inbox/pruned.toml plus the
// final messages stored), when the inbox itself was readable; an unreadable
// tally leaves the totals unknown rather than too low.
func (in *Inbox) addTotals(s state.Seat, v inbox.View) {
	if !in.IsKnown() {
		return
	}
	t, err := s.ReadTally()
	if err != nil {
		return
	}
	tot := s.Totals(t, v)
	in.ProcessedTotal, in.FailedTotal = ptr(tot.Processed), tot.Failed
}

func readInbox(v inbox.View, err error, now time.Time) Inbox {
	if err != nil {
		return Inbox{Meta: entriesMeta(err)}
	}
	processed, failed := v.Counts()
	var depth, queued, mentions int
	var oldest time.Time
	for _, e := range v.Open {
		switch e.Status.State {
		case inbox.StateProcessed:
			processed++
		case inbox.StateFailed:
			failed++
		default:
			depth++
			mentions += guard.MentionCount(e.Msg.Text)
			if e.Status.State == inbox.StateQueued {
				queued++
				if oldest.IsZero() || e.Msg.EnqueuedAt.Before(oldest) {
					oldest = e.Msg.EnqueuedAt
				}
			}
		}
	}
	in := Inbox{Depth: ptr(depth), Queued: ptr(queued), Failed: ptr(failed), Processed: ptr(processed), Mentions: ptr(mentions)}
	if !oldest.IsZero() {
		in.OldestQueuedSeconds = ptr(ageSeconds(now.Sub(oldest)))
		in.OldestQueuedAt = ptr(oldest.UTC())
	}
	in.Meta = Meta{State: Known, Bound: fmt.Sprintf("inbox/msgs and the status directories of this seat (%d stored)", len(v.Open)+len(v.Final))}
	return in
}

func readInFlight(es []inbox.Entry, err error, now time.Time) InFlight {
	if err != nil {
		return InFlight{Meta: entriesMeta(err)}
	}
	for _, e := range es {
		st := e.Status
		if st.State != inbox.StateSubmitting && st.State != inbox.StateSubmitted {
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
		return InFlight{Meta: meta(Known, "", bound, since, now), ID: ptr(e.Msg.ID), MessageState: ptr(st.State), Attempts: ptr(st.Attempts),
			Mentions: ptr(guard.MentionCount(e.Msg.Text))}
	}
	return InFlight{Meta: Meta{State: Known, Why: "no message is between paste and turn end", Bound: "inbox/status of this seat"}}
}

func readCursor(s state.Seat, v inbox.View, entErr error, now time.Time) Cursor {
	c, err := s.CursorFile().Read()
	if err != nil {
		return Cursor{Meta: missing(err, "no cursor.toml: no message has been closed yet")}
	}
	out := Cursor{ID: ptr(c.ID), MessageState: ptr(c.State), Closed: ptr(c.Closed), ClosedBy: ptr(c.ClosedBy)}
	state, why := Known, ""
	if entErr == nil {
		if past, ok := s.ClosedPast(v, c); ok {
			state = Stale
			why = fmt.Sprintf("message %s closed after cursor.toml was written and lies beyond its cursor %s (the driver brings it up to date)", past, c.ID)
		}
	}
	out.Meta = meta(state, why, "cursor.toml of this seat (written by its driver)", c.Updated, now)
	return out
}

// readLastTurnEnd finds the latest turn end of the seat's current session:
// the harness's own Stop hook event carrying the session id, the
// driver's processed messages bound to that session, and context.toml's record
// of it. The newest wins; its source is named.
func readLastTurnEnd(evs *events, sess state.Session, haveSess bool, s state.Seat, v inbox.View, ctx state.Context, ctxErr error, now time.Time) Meta {
	if !haveSess {
		return Meta{State: Unknown, Why: "no session id in session.toml: turn ends cannot be bound to this seat"}
	}
	var at time.Time
	var bound string
	// StopFailure is not counted: a refused turn added nothing to the context,
	// and counting it would mark a still-true reading stale.
	if ev, dir, ok := evs.last(hookwire.EvStop, sess.ID); ok {
		at, bound = ev.ReceivedAt, fmt.Sprintf("the harness's %s hook event %s/%s, session_id matches session.toml", ev.Kind, dir, ev.File)
	}
	// Sessions follow one another: only the newest processed message can
	// have ended the current session's last turn.
	if r, ok := v.Newest(inbox.StateProcessed); ok {
		if e, ok := s.ReadFinal(v, r); ok && e.Status.State == inbox.StateProcessed && e.Status.SessionID == sess.ID && e.Status.EndedAt.After(at) {
			at, bound = e.Status.EndedAt, "inbox/processed/"+e.Msg.ID+".toml ended_at (processed, session_id matches session.toml)"
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

func readContext(c state.Context, err error, sess state.Session, haveSess bool, turnEnd Meta, now time.Time) Context {
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
func readModel(evs *events, sess state.Session, haveSess bool, c state.Context, ctxErr error, now time.Time) Text {
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
	s := evs.s
	if data, err := readFileNoLink(s.StatusLinePath()); err == nil {
		r, perr := state.ParseStatusLine(data)
		switch {
		case perr != nil && !errors.Is(perr, state.ErrNoUsage):
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
	if ev, dir, ok := evs.last(hookwire.EvSessionStart, sess.ID); ok {
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

// events finds a seat's newest hook event of one kind bound to a session, for
// one row. Both event directories are listed once, on the first lookup, and
// every answer is kept: a row asks three times (SessionStart twice, Stop once),
// and events/seen keeps a week of events.
type events struct {
	s      state.Seat
	listed bool
	cands  []eventFile // newest first (the arrival time in ns leads the name)
	found  map[string]foundEvent
}

type eventFile struct{ name, dir, path string }

type foundEvent struct {
	ev  hookwire.Event
	dir string
	ok  bool
}

func newEvents(s state.Seat) *events { return &events{s: s, found: map[string]foundEvent{}} }

// last returns the newest event of kind whose session_id is sessionID, and the
// directory it is in (events or events/seen); it opens at most maxEventReads
// files of that kind.
func (e *events) last(kind, sessionID string) (hookwire.Event, string, bool) {
	key := kind + "\x00" + sessionID
	if f, ok := e.found[key]; ok {
		return f.ev, f.dir, f.ok
	}
	if !e.listed {
		e.listed = true
		for _, d := range []struct{ rel, path string }{{"events", e.s.EventsDir()}, {"events/seen", e.s.SeenDir()}} {
			ents, err := os.ReadDir(d.path)
			if err != nil {
				continue
			}
			for _, de := range ents {
				if de.Type().IsRegular() && strings.HasSuffix(de.Name(), ".json") {
					e.cands = append(e.cands, eventFile{de.Name(), d.rel, filepath.Join(d.path, de.Name())})
				}
			}
		}
		sort.Slice(e.cands, func(i, j int) bool { return e.cands[i].name > e.cands[j].name })
	}
	var f foundEvent
	reads := 0
	for _, c := range e.cands {
		if !strings.HasSuffix(c.name, "-"+kind+".json") {
			continue
		}
		if reads++; reads > maxEventReads {
			break
		}
		ev, err := hookwire.ReadEvent(c.path)
		if err != nil {
			continue // consumed (moved to seen/) between the listing and the read, or corrupt
		}
		if ev.Fields.SessionID == sessionID {
			f = foundEvent{ev, c.dir, true}
			break
		}
	}
	e.found[key] = f
	return f.ev, f.dir, f.ok
}
