package telemetry

import (
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/state"
)

// Cell is one reading in a few words, for the status table and watch lines:
// its value, or `unknown`/`stale`/`bad FILE` with what little fits. The full
// reason and binding are in the reading's Meta (status NAME prints them).
type Cell struct {
	Text string
	Tone Tone // how a terminal may colour it
}

// Tone classes a cell for colour: plain, good, warn (stale, waiting), dim
// (unknown) and bad (error, dead, gone).
type Tone int

const (
	Plain Tone = iota
	Good
	Warn
	Dim
	Bad
)

// Column is one column of the status table.
type Column struct {
	Key, Heading string
	Rank         int
}

// Columns lists the readings in table order, with their headings. Rank orders
// them by how much a person glancing at the table needs them (1 first): a
// table narrower than every column keeps the best-ranked ones that fit.
var Columns = []Column{
	{"health", "HEALTH", 1}, {"intent", "INTENT", 2}, {"shape", "SHAPE", 18}, {"phase", "PHASE", 3},
	{"heartbeat", "BEAT", 10}, {"driver", "DRIVER", 11}, {"session", "SESSION", 13}, {"model", "MODEL", 14},
	{"context", "CONTEXT", 8}, {"inbox", "INBOX", 5}, {"in_flight", "IN-FLIGHT", 6}, {"cursor", "CURSOR", 15},
	{"last_turn_end", "LAST TURN", 7}, {"ladder", "RUNG", 16}, {"provider_waits", "WAITS", 9},
	{"compaction", "CYCLE", 17}, {"mode", "MODE", 12}, {"done", "DONE", 4},
	{"isolation", "ISOL", 19}, {"transport", "TRANSPORT", 20},
}

// Cells returns the row's cells keyed as in Columns, each text escaped for a
// terminal (termtext.Line): cells carry harness and pane words.
func (r Row) Cells() map[string]Cell {
	cells := r.cells()
	for k, c := range cells {
		c.Text = termtext.Line(c.Text)
		cells[k] = c
	}
	return cells
}

func (r Row) cells() map[string]Cell {
	return map[string]Cell{
		"harness":        textCell(r.Harness),
		"intent":         r.intentCell(),
		"health":         r.healthCell(),
		"shape":          textCell(r.Shape),
		"transport":      textCell(r.Transport),
		"phase":          r.phaseCell(),
		"heartbeat":      r.beatCell(),
		"driver":         r.driverCell(),
		"session":        r.sessionCell(),
		"model":          textCell(r.Model),
		"context":        r.contextCell(),
		"inbox":          r.inboxCell(),
		"in_flight":      r.inFlightCell(),
		"cursor":         r.cursorCell(),
		"last_turn_end":  r.turnCell(),
		"ladder":         r.ladderCell(),
		"provider_waits": r.waitsCell(),
		"compaction":     r.cycleCell(),
		"mode":           textCell(r.Mode),
		"done":           r.doneCell(),
		"last_exit":      textCell(r.LastExit),
		"isolation":      textCell(r.Isolation),
	}
}

// stopped reports a seat its person stopped whose driver is not live: its last
// beat and the holder recorded last (`seat stop` takes the lock to tear down)
// are history, not a stale loop or a dead driver.
func (r Row) stopped() bool {
	in := r.Intent
	return in.IsKnown() && in.Value != nil && *in.Value == state.IntentStopped && (r.Driver.Live == nil || !*r.Driver.Live)
}

// neverStarted reports a seat that was made (seat init) but never started:
// no intent.toml, no driver ever (no owner.toml), no heartbeat and no
// session. Its readings are not unknown, they are not there yet (recover
// says the same: "never started").
func (r Row) neverStarted() bool {
	return r.Intent.State == Unknown && r.Driver.State == Unknown && r.Heartbeat.State == Unknown && r.Session.State == Unknown
}

func (r Row) doneCell() Cell {
	d := r.Done
	if !d.IsKnown() || d.Pending == nil {
		return off(d.Meta)
	}
	if !*d.Pending {
		return Cell{"-", Plain}
	}
	t := "pending " + ageOf(d.Meta)
	if *d.Attempts > 0 {
		return Cell{fmt.Sprintf("%s, %d failed: %s", t, *d.Attempts, *d.LastError), Warn}
	}
	return Cell{t, Warn}
}

// Age prints a duration the way status does: 850ms, 42s, 3m05s, 2h10m, 3d4h.
func Age(d time.Duration) string {
	if d < 0 {
		return "-" + Age(-d)
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

func ageOf(m Meta) string {
	if m.AgeSeconds == nil {
		return "?"
	}
	return Age(time.Duration(*m.AgeSeconds * float64(time.Second)))
}

// off is the cell of a reading with no value.
func off(m Meta) Cell {
	if m.State == Error {
		return errCell(m)
	}
	return Cell{"unknown", Dim}
}

// errCell is the cell of a reading whose record exists but could not be read,
// in the words a person acts on: the record and what is wrong with it ("bad
// seat.toml", "unreadable health.toml"), where a bare "error" sent them to
// `status NAME` to find out which file to fix. The record is the first
// *.toml the error (Why) names; "unreadable" when none is.
func errCell(m Meta) Cell {
	name := ""
	for _, f := range strings.Fields(m.Why) {
		f = strings.TrimRight(f, ":;,)")
		if strings.HasSuffix(f, ".toml") {
			name = f[strings.LastIndex(f, "/")+1:]
			break
		}
	}
	switch {
	case name == "":
		return Cell{"unreadable", Bad}
	case strings.Contains(m.Why, "permission denied"):
		return Cell{"unreadable " + name, Bad}
	}
	return Cell{"bad " + name, Bad}
}

func (r Row) intentCell() Cell {
	if r.neverStarted() {
		return Cell{"never started", Dim}
	}
	return textCell(r.Intent)
}

func textCell(t Text) Cell {
	if !t.IsKnown() || t.Value == nil {
		return off(t.Meta)
	}
	if t.State == Stale {
		return Cell{"stale: " + *t.Value, Warn}
	}
	return Cell{*t.Value, Plain}
}

func (r Row) healthCell() Cell {
	h := r.Health
	if !h.IsKnown() || h.Verdict == nil {
		if h.State == Error {
			return errCell(h.Meta)
		}
		return r.healthBeforeRecover()
	}
	// What is true now comes before recover's last word: a seat stopped since
	// (recover judges only seats meant to run, so its verdict would only
	// age), and a driver gone since a sweep that found the seat well.
	d := r.Driver
	gone := d.State != Error && d.Live != nil && !*d.Live
	switch {
	case r.stopped():
		return Cell{"stopped", Dim}
	case gone && h.revived:
		return Cell{"no driver (since the last sweep: revived)", Bad}
	case gone && *h.Verdict == "ok":
		return Cell{"no driver (since the last sweep: ok)", Bad}
	}
	if h.State == Stale {
		return Cell{"stale: " + *h.Verdict + " " + ageOf(h.Meta), Warn}
	}
	st := Good
	switch *h.Verdict {
	case "dead":
		if h.revived {
			// Dead when judged, then revived and verified in the same sweep:
			// the seat is back, not dead until the next sweep says so.
			return Cell{"revived", Good}
		}
		st = Bad
	case "unknown":
		return Cell{"unknown (recover could not observe)", Dim}
	}
	return Cell{*h.Verdict, st}
}

// healthBeforeRecover is the health cell of a seat recover has not judged
// (no health.toml: recover never ran, or not yet on this seat), derived from
// the live records instead of "unknown" for every seat: a stopped seat is
// stopped, a live driver with a fresh beat is live, a seat meant to run with
// no live driver has none, a seat never started whose seat.toml cannot be
// read says so. Recover's first verdict replaces it.
func (r Row) healthBeforeRecover() Cell {
	d, hb := r.Driver, r.Heartbeat
	switch {
	case r.neverStarted() && r.Shape.State == Error:
		// seat.toml cannot be read, so the seat cannot start: what to fix says
		// more than "never started", which INTENT says as well.
		return errCell(r.Shape.Meta)
	case r.neverStarted():
		return Cell{"never started", Dim}
	case r.stopped():
		return Cell{"stopped (no recover verdict)", Dim}
	case d.State != Error && d.Live != nil && *d.Live && hb.State == Known:
		return Cell{"live (no recover verdict yet)", Good}
	case d.State != Error && d.Live != nil && !*d.Live:
		return Cell{"no driver (no recover verdict yet)", Bad}
	}
	return Cell{"unknown (no recover verdict)", Dim}
}

func (r Row) phaseCell() Cell {
	h := r.Heartbeat
	if r.stopped() {
		return Cell{"stopped", Dim}
	}
	if d := r.Driver; d.State != Error && d.Live != nil && !*d.Live {
		// Meant to run, and no driver: the last beat ("relaunching" after a
		// start that failed) is history, and saying it as the phase misleads.
		if h.IsKnown() && h.Phase != nil {
			return Cell{"no driver (last: " + h.PhaseText() + ")", Warn}
		}
		return Cell{"no driver", Warn}
	}
	if !h.IsKnown() || h.Phase == nil {
		return off(h.Meta)
	}
	p := h.PhaseText()
	if h.State == Stale {
		return Cell{"stale: " + p, Warn}
	}
	return Cell{p, Plain}
}

func (r Row) beatCell() Cell {
	h := r.Heartbeat
	if !h.IsKnown() {
		return off(h.Meta)
	}
	if r.stopped() {
		return Cell{"last " + ageOf(h.Meta) + " ago", Dim}
	}
	if h.State == Stale {
		return Cell{"stale " + ageOf(h.Meta), Warn}
	}
	return Cell{ageOf(h.Meta), Plain}
}

func (r Row) driverCell() Cell {
	d := r.Driver
	if d.State == Error {
		return errCell(d.Meta)
	}
	if r.stopped() {
		return Cell{"none (stopped)", Dim}
	}
	if d.Live == nil {
		if d.Holder != nil {
			return Cell{"unknown " + *d.Holder, Dim}
		}
		return Cell{"unknown", Dim}
	}
	if *d.Live {
		return Cell{"live " + *d.Holder, Good}
	}
	return Cell{"gone " + *d.Holder, Bad}
}

func (r Row) sessionCell() Cell {
	s := r.Session
	if !s.IsKnown() || s.ID == nil {
		return off(s.Meta)
	}
	id := *s.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return Cell{fmt.Sprintf("%s g%d", id, *s.Generation), Plain}
}

func (r Row) contextCell() Cell {
	c := r.Context
	if !c.IsKnown() {
		return off(c.Meta)
	}
	var b strings.Builder
	if c.Percent != nil {
		fmt.Fprintf(&b, "%.0f%% ", *c.Percent)
	}
	fmt.Fprintf(&b, "%d", *c.Occupancy)
	if c.Window != nil {
		fmt.Fprintf(&b, "/%d", *c.Window)
	}
	if c.Floor != nil {
		fmt.Fprintf(&b, " floor %d", *c.Floor)
	} else {
		b.WriteString(" floor ?")
	}
	if c.State == Stale {
		return Cell{"stale: " + b.String(), Warn}
	}
	return Cell{b.String(), Plain}
}

func (r Row) inboxCell() Cell {
	in := r.Inbox
	if !in.IsKnown() || in.Depth == nil {
		return off(in.Meta)
	}
	t := fmt.Sprint(*in.Depth)
	if in.OldestQueuedSeconds != nil {
		t += " (oldest " + Age(time.Duration(*in.OldestQueuedSeconds*float64(time.Second))) + ")"
	}
	if in.Failed != nil && *in.Failed > 0 {
		t += fmt.Sprintf(", %d failed", *in.Failed)
	}
	if in.Mentions != nil && *in.Mentions > 0 {
		t += fmt.Sprintf(", %d @mentions", *in.Mentions)
	}
	return Cell{t, Plain}
}

func (r Row) inFlightCell() Cell {
	f := r.InFlight
	if !f.IsKnown() {
		return off(f.Meta)
	}
	if f.ID == nil {
		return Cell{"none", Plain}
	}
	t := fmt.Sprintf("%s %s %s", *f.ID, *f.MessageState, ageOf(f.Meta))
	if f.Mentions != nil && *f.Mentions > 0 {
		t += fmt.Sprintf(", %d @mentions", *f.Mentions)
	}
	if r.stopped() {
		// Nothing moves it while the seat is stopped: the next start settles
		// it by its evidence (delivered once, or sent again).
		return Cell{t + " (seat stopped: settled at its next start)", Dim}
	}
	return Cell{t, Plain}
}

func (r Row) cursorCell() Cell {
	c := r.Cursor
	if !c.IsKnown() || c.ID == nil {
		return off(c.Meta)
	}
	t := fmt.Sprintf("%s (%d closed)", *c.ID, *c.Closed)
	if c.State == Stale {
		return Cell{"stale: " + t, Warn}
	}
	return Cell{t, Plain}
}

func (r Row) turnCell() Cell {
	if !r.LastTurnEnd.IsKnown() {
		return off(r.LastTurnEnd)
	}
	return Cell{ageOf(r.LastTurnEnd) + " ago", Plain}
}

func (r Row) ladderCell() Cell {
	l := r.Ladder
	if !l.IsKnown() || l.Rung == nil {
		return off(l.Meta)
	}
	t := *l.Rung
	if t == "" {
		t = "top (no ladder)"
	}
	switch {
	case l.Floor == nil && *l.Rung != "":
		t += ", floor ?"
	case l.Floor == nil:
	case *l.Floor != "" && *l.Floor != *l.Rung:
		t += ", floor " + *l.Floor
	}
	return Cell{t, Plain}
}

func (r Row) waitsCell() Cell {
	w := r.ProviderWaits
	if !w.IsKnown() {
		return off(w.Meta)
	}
	if len(w.Waits) == 0 {
		// No provider-wide wait, but the seat's own driver may hold its queue
		// for an outage (a transient 5xx, a means fault): a held queue is
		// named here too, with its next probe, never "none".
		if hb := r.Heartbeat; hb.State == Known && hb.Fault != nil && !r.stopped() {
			t := "held: " + string(*hb.Fault) + " outage"
			if hb.Waiting != nil && strings.Contains(*hb.Waiting, "next probe") {
				t += ", next probe" + (*hb.Waiting)[strings.LastIndex(*hb.Waiting, "next probe")+len("next probe"):]
			}
			return Cell{t, Warn}
		}
		return Cell{"none", Plain}
	}
	first := w.Waits[0]
	for _, x := range w.Waits[1:] {
		if x.Until.Before(first.Until) {
			first = x
		}
	}
	t := "until " + first.Until.Local().Format("15:04:05")
	if len(w.Waits) > 1 {
		t += fmt.Sprintf(" (+%d)", len(w.Waits)-1)
	}
	return Cell{t, Warn}
}

func (r Row) cycleCell() Cell {
	c := r.Compaction
	if !c.IsKnown() || c.CycleState == nil {
		return off(c.Meta)
	}
	t := *c.CycleState + " " + ageOf(c.Meta) + " ago"
	st := Plain
	if *c.CycleState == "failed" {
		st = Bad
	}
	return Cell{t, st}
}
