package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// family is one Prometheus metric family: its help text and how to take its
// samples from a row. A sample whose reading is unknown is not written at all
// (never a 0 in its place); pantty_seat_reading_state says why it is missing.
// kind is the family's Prometheus type: by convention a name ending in _total
// is a counter (it never drops), every other family a gauge.
func (f family) kind() string {
	if strings.HasSuffix(f.name, "_total") {
		return "counter"
	}
	return "gauge"
}

type family struct {
	name, help string
	samples    func(r Row, emit func(extra []string, v float64))
	// age marks an age in seconds: right when scraped live, frozen in a
	// textfile written once a sweep, so the textfile form leaves it out and
	// keeps the matching *_timestamp_seconds family.
	age bool
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// NamedReading is one reading's name (its JSON field) and its Meta.
type NamedReading struct {
	Name string
	Meta Meta
}

// Readings lists every reading of the row with its Meta, in document order.
func (r Row) Readings() []NamedReading {
	return []NamedReading{
		{"harness", r.Harness.Meta}, {"shape", r.Shape.Meta}, {"transport", r.Transport.Meta}, {"intent", r.Intent.Meta},
		{"health", r.Health.Meta}, {"heartbeat", r.Heartbeat.Meta}, {"driver", r.Driver.Meta},
		{"session", r.Session.Meta}, {"model", r.Model.Meta}, {"context", r.Context.Meta},
		{"inbox", r.Inbox.Meta}, {"in_flight", r.InFlight.Meta}, {"cursor", r.Cursor.Meta},
		{"last_turn_end", r.LastTurnEnd}, {"ladder", r.Ladder.Meta},
		{"provider_waits", r.ProviderWaits.Meta}, {"compaction", r.Compaction.Meta},
		{"last_exit", r.LastExit.Meta},
		{"isolation", r.Isolation.Meta},
	}
}

var families = []family{
	{"pantty_seat_info", "A seat with a seat.toml under the state root (always 1).",
		func(r Row, emit func([]string, float64)) { emit(nil, 1) }, false},
	{"pantty_seat_reading_state", "1 for each reading's state: known, stale, unknown (no record) or error (unreadable record).",
		func(r Row, emit func([]string, float64)) {
			for _, x := range r.Readings() {
				emit([]string{"reading", x.Name, "state", x.Meta.State}, 1)
			}
		}, false},
	{"pantty_seat_health", "recover's last verdict on the seat (ok, dead, unknown = could not observe); absent without a verdict.",
		func(r Row, emit func([]string, float64)) {
			if r.Health.IsKnown() && r.Health.Verdict != nil {
				emit([]string{"verdict", *r.Health.Verdict}, 1)
			}
		}, false},
	{"pantty_seat_phase", "The driver loop's phase from its last heartbeat (see pantty_seat_heartbeat_stale).",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.Phase != nil {
				emit([]string{"phase", *r.Heartbeat.Phase}, 1)
			}
		}, false},
	{"pantty_seat_heartbeat_age_seconds", "Seconds since the driver loop's last heartbeat.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.AgeSeconds != nil {
				emit(nil, *r.Heartbeat.AgeSeconds)
			}
		}, true},
	{"pantty_seat_heartbeat_interval_seconds", "The interval the heartbeat declares; stale beyond twice it.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.IntervalSeconds != nil {
				emit(nil, *r.Heartbeat.IntervalSeconds)
			}
		}, false},
	{"pantty_seat_heartbeat_stale", "1 when the last heartbeat is older than twice its declared interval.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() {
				emit(nil, b2f(r.Heartbeat.State == Stale))
			}
		}, false},
	{"pantty_seat_driver_live", "1 when owner.toml's holder process is alive as recorded (pid and start time).",
		func(r Row, emit func([]string, float64)) {
			if r.Driver.Live != nil {
				emit(nil, b2f(*r.Driver.Live))
			}
		}, false},
	{"pantty_seat_session_generation", "The harness session's generation (session.toml).",
		func(r Row, emit func([]string, float64)) {
			if r.Session.IsKnown() && r.Session.Generation != nil {
				emit(nil, float64(*r.Session.Generation))
			}
		}, false},
	{"pantty_seat_model_info", "The model as the harness itself reported it (never seat.toml's).",
		func(r Row, emit func([]string, float64)) {
			if r.Model.IsKnown() && r.Model.Value != nil {
				emit([]string{"model", *r.Model.Value}, 1)
			}
		}, false},
	{"pantty_seat_context_occupancy_tokens", "Tokens in the context window at the last reading.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Occupancy != nil {
				emit(nil, float64(*r.Context.Occupancy))
			}
		}, false},
	{"pantty_seat_context_floor_tokens", "The fixed floor (system prompt, tools, memory): never shrinks; absent until measured.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Floor != nil {
				emit(nil, float64(*r.Context.Floor))
			}
		}, false},
	{"pantty_seat_context_reclaimable_tokens", "The part a compaction can reclaim; absent until the floor is measured.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Reclaimable != nil {
				emit(nil, float64(*r.Context.Reclaimable))
			}
		}, false},
	{"pantty_seat_context_window_tokens", "The context window size the harness reported.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Window != nil {
				emit(nil, float64(*r.Context.Window))
			}
		}, false},
	{"pantty_seat_context_ratio", "Occupancy as a fraction of the window.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Percent != nil {
				emit(nil, *r.Context.Percent/100)
			}
		}, false},
	{"pantty_seat_context_stale", "1 when the context reading predates the last turn end.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() {
				emit(nil, b2f(r.Context.State == Stale))
			}
		}, false},
	{"pantty_seat_context_age_seconds", "Seconds since the context reading was taken.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.AgeSeconds != nil {
				emit(nil, *r.Context.AgeSeconds)
			}
		}, true},
	{"pantty_seat_inbox_depth", "Messages not yet in a final state (queued, submitting, submitted).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Depth != nil {
				emit(nil, float64(*r.Inbox.Depth))
			}
		}, false},
	{"pantty_seat_inbox_failed", "Stored messages in the failed state (within retention).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Failed != nil {
				emit(nil, float64(*r.Inbox.Failed))
			}
		}, false},
	{"pantty_seat_messages_processed_total", "Messages the seat has processed, ever (pruned ones included: inbox/pruned.toml).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.ProcessedTotal != nil {
				emit(nil, float64(*r.Inbox.ProcessedTotal))
			}
		}, false},
	{"pantty_seat_messages_failed_total", "Messages that failed, ever, by failure reason (pruned ones included).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() {
				for _, reason := range slices.Sorted(maps.Keys(r.Inbox.FailedTotal)) {
					emit([]string{"reason", reason}, float64(r.Inbox.FailedTotal[reason]))
				}
			}
		}, false},
	{"pantty_seat_recoveries_total", "Verified recoveries of the seat by recover, ever (recovery.toml revived).",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.Revived != nil {
				emit(nil, float64(*r.Ladder.Revived))
			}
		}, false},
	{"pantty_seat_inbox_mentions", "'@' mentions the harness will expand in the messages not yet final.",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Mentions != nil {
				emit(nil, float64(*r.Inbox.Mentions))
			}
		}, false},
	{"pantty_seat_inbox_oldest_queued_seconds", "How long the oldest queued message has waited; absent when none is queued.",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.OldestQueuedSeconds != nil {
				emit(nil, *r.Inbox.OldestQueuedSeconds)
			}
		}, true},
	{"pantty_seat_in_flight_age_seconds", "Seconds since the in-flight message was pasted; absent when none is in flight.",
		func(r Row, emit func([]string, float64)) {
			if r.InFlight.IsKnown() && r.InFlight.ID != nil && r.InFlight.AgeSeconds != nil {
				emit(nil, *r.InFlight.AgeSeconds)
			}
		}, true},
	{"pantty_seat_cursor_closed", "Messages at or before the cursor (all in a final state).",
		func(r Row, emit func([]string, float64)) {
			if r.Cursor.IsKnown() && r.Cursor.Closed != nil {
				emit(nil, float64(*r.Cursor.Closed))
			}
		}, false},
	{"pantty_seat_last_turn_end_timestamp_seconds", "Unix time of the session's last recorded turn end.",
		func(r Row, emit func([]string, float64)) {
			if r.LastTurnEnd.IsKnown() && r.LastTurnEnd.At != nil {
				emit(nil, unix(*r.LastTurnEnd.At))
			}
		}, false},
	{"pantty_seat_ladder_rung_info", "The means-ladder rung the pane was last launched on (rung=\"\" without a [[ladder]]).",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.Rung != nil {
				emit([]string{"rung", *r.Ladder.Rung}, 1)
			}
		}, false},
	{"pantty_seat_ladder_floor_info", "recover's persisted demotion floor (rung=\"\" = the top); absent without recovery.toml.",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.Floor != nil {
				emit([]string{"rung", *r.Ladder.Floor}, 1)
			}
		}, false},
	{"pantty_seat_ladder_means_failures", "Unverified means recoveries on the current floor, as recover recorded them.",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.MeansFailures != nil {
				emit(nil, float64(*r.Ladder.MeansFailures))
			}
		}, false},
	{"pantty_seat_provider_wait_until_timestamp_seconds", "Unix time a provider wait holding the seat ends.",
		func(r Row, emit func([]string, float64)) {
			if r.ProviderWaits.IsKnown() {
				for _, w := range r.ProviderWaits.Waits {
					emit([]string{"provider", w.Provider}, unix(w.Until))
				}
			}
		}, false},
	{"pantty_seat_intent", "What the person wants (intent.toml): running or stopped; recover acts only on running seats.",
		func(r Row, emit func([]string, float64)) {
			if r.Intent.IsKnown() && r.Intent.Value != nil {
				emit([]string{"want", *r.Intent.Value}, 1)
			}
		}, false},
	{"pantty_seat_heartbeat_timestamp_seconds", "Unix time of the driver loop's last heartbeat.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.At != nil {
				emit(nil, unix(*r.Heartbeat.At))
			}
		}, false},
	{"pantty_seat_context_timestamp_seconds", "Unix time the context reading was taken.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.At != nil {
				emit(nil, unix(*r.Context.At))
			}
		}, false},
	{"pantty_seat_inbox_oldest_queued_timestamp_seconds", "Unix time the oldest queued message was enqueued; absent when none is queued.",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.OldestQueuedAt != nil {
				emit(nil, unix(*r.Inbox.OldestQueuedAt))
			}
		}, false},
	{"pantty_seat_in_flight_since_timestamp_seconds", "Unix time the in-flight message's submission was proven; absent when none is in flight.",
		func(r Row, emit func([]string, float64)) {
			if r.InFlight.IsKnown() && r.InFlight.ID != nil && r.InFlight.At != nil {
				emit(nil, unix(*r.InFlight.At))
			}
		}, false},
	{"pantty_seat_done_pending", "1 while a 'seat done' waits for recover's teardown (cleanup.toml), 0 when none is pending.",
		func(r Row, emit func([]string, float64)) {
			if r.Done.IsKnown() && r.Done.Pending != nil {
				emit(nil, b2f(*r.Done.Pending))
			}
		}, false},
	{"pantty_seat_compaction_info", "The state of the last compaction cycle (requested, done, failed).",
		func(r Row, emit func([]string, float64)) {
			if r.Compaction.IsKnown() && r.Compaction.CycleState != nil {
				emit([]string{"cycle_state", *r.Compaction.CycleState}, 1)
			}
		}, false},
	{"pantty_seat_compaction_timestamp_seconds", "Unix time the last compaction cycle ended (or was requested, while it runs).",
		func(r Row, emit func([]string, float64)) {
			if r.Compaction.IsKnown() && r.Compaction.At != nil {
				emit(nil, unix(*r.Compaction.At))
			}
		}, false},
}

// PromOptions shapes one exposition.
type PromOptions struct {
	// Home, when set, adds the state root's recover figures (recover-last.toml:
	// last sweep time, duration, interval, seats by verdict, revived, exit code).
	Home string
	// Now, when set, is written as pantty_exposition_timestamp_seconds, so an
	// alert can tell a textfile nobody rewrites any more.
	Now time.Time
	// Textfile leaves out the age families: in a file written once a sweep an
	// age is frozen at its writing; the *_timestamp_seconds families stay right.
	Textfile bool
}

// WritePrometheus writes the rows in the Prometheus text exposition format
// (version 0.0.4): every family with its HELP and TYPE lines, every sample
// labelled seat, harness and shape. An unknown reading has no sample.
func WritePrometheus(w io.Writer, rows []Row) error {
	return WritePrometheusWith(w, rows, PromOptions{})
}

// WritePrometheusWith is WritePrometheus shaped by opt.
func WritePrometheusWith(w io.Writer, rows []Row, opt PromOptions) error {
	var b bytes.Buffer
	for _, f := range families {
		if f.age && opt.Textfile {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.kind())
		for _, r := range rows {
			base := []string{"seat", r.Seat, "harness", valueOr(r.Harness), "shape", valueOr(r.Shape)}
			f.samples(r, func(extra []string, v float64) {
				b.WriteString(f.name)
				writeLabels(&b, append(append([]string{}, base...), extra...))
				b.WriteByte(' ')
				b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
				b.WriteByte('\n')
			})
		}
	}
	if opt.Home != "" {
		writeSweep(&b, opt.Home)
	}
	if !opt.Now.IsZero() {
		gauge(&b, "pantty_exposition_timestamp_seconds", "Unix time this exposition was written (a textfile is rewritten by every recover sweep).", nil, unix(opt.Now))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeSweep writes recover's figures for the state root from
// recover-last.toml; without the file (no sweep yet) nothing is written.
func writeSweep(b *bytes.Buffer, home string) {
	var l state.LastSweep
	if decodeLenient(filepath.Join(home, LastSweepFile), &l) != nil {
		return
	}
	gauge(b, "pantty_recover_last_sweep_timestamp_seconds", "Unix time recover's last sweep ran (recover-last.toml).", nil, unix(l.At))
	gauge(b, "pantty_recover_last_sweep_duration_seconds", "How long recover's last sweep took.", nil, l.Took.Seconds())
	gauge(b, "pantty_recover_interval_seconds", "The interval recover is scheduled at; a last sweep older than twice it means recover stopped.", nil, l.Interval.Seconds())
	fmt.Fprintf(b, "# HELP pantty_recover_last_sweep_seats Seats the last sweep judged, by verdict.\n# TYPE pantty_recover_last_sweep_seats gauge\n")
	for _, v := range []struct {
		verdict string
		n       int
	}{{"ok", l.OK}, {"dead", l.Dead}, {"unknown", l.Unknown}} {
		b.WriteString("pantty_recover_last_sweep_seats")
		writeLabels(b, []string{"verdict", v.verdict})
		fmt.Fprintf(b, " %d\n", v.n)
	}
	gauge(b, "pantty_recover_last_sweep_revived", "Seats the last sweep revived (verified).", nil, float64(l.Revived))
	gauge(b, "pantty_recover_last_sweep_exit_code", "The last sweep's exit code (0 ok, 1 a seat still dead, 4 could not observe).", nil, float64(l.Code))
}

// gauge writes a one-sample family.
func gauge(b *bytes.Buffer, name, help string, labels []string, v float64) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n%s", name, escapeHelp(help), name, name)
	if len(labels) > 0 {
		writeLabels(b, labels)
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	b.WriteByte('\n')
}

// WriteTextfile writes the Prometheus form to path atomically, for
// node_exporter's textfile collector (name the file *.prom). It goes through
// fsatomic.WriteFile with its temp file in path's own directory — the collector
// reads only *.prom, so it never sees the ".w-*" temp — and the file is private
// (0600) like every file pantty writes: the collector must run as the same
// user (or root) to read it. `pantty recover --textfile PATH` calls this after
// each sweep.
func WriteTextfile(path string, rows []Row) error {
	return WriteTextfileWith(path, rows, PromOptions{Textfile: true})
}

// WriteTextfileWith is WriteTextfile shaped by opt (Textfile is implied).
func WriteTextfileWith(path string, rows []Row, opt PromOptions) error {
	opt.Textfile = true
	var b bytes.Buffer
	if err := WritePrometheusWith(&b, rows, opt); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return fsatomic.WriteFile(filepath.Dir(abs), abs, b.Bytes())
}

func valueOr(t Text) string {
	if t.Value == nil {
		return ""
	}
	return *t.Value
}

func writeLabels(b *bytes.Buffer, kv []string) {
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
