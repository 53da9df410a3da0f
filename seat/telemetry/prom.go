package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/seat"
)

// family is one Prometheus metric family: its help text and how to take its
// samples from a row. A sample whose reading is unknown is not written at all
// (never a 0 in its place); pantty_seat_reading_state says why it is missing.
type family struct {
	name, help string
	samples    func(r Row, emit func(extra []string, v float64))
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
		{"harness", r.Harness.Meta}, {"shape", r.Shape.Meta}, {"intent", r.Intent.Meta},
		{"health", r.Health.Meta}, {"heartbeat", r.Heartbeat.Meta}, {"driver", r.Driver.Meta},
		{"session", r.Session.Meta}, {"model", r.Model.Meta}, {"context", r.Context.Meta},
		{"inbox", r.Inbox.Meta}, {"in_flight", r.InFlight.Meta}, {"cursor", r.Cursor.Meta},
		{"last_turn_end", r.LastTurnEnd}, {"ladder", r.Ladder.Meta},
		{"provider_waits", r.ProviderWaits.Meta}, {"compaction", r.Compaction.Meta},
	}
}

var families = []family{
	{"pantty_seat_info", "A seat with a seat.toml under the state root (always 1).",
		func(r Row, emit func([]string, float64)) { emit(nil, 1) }},
	{"pantty_seat_reading_state", "1 for each reading's state: known, stale, unknown (no record) or error (unreadable record).",
		func(r Row, emit func([]string, float64)) {
			for _, x := range r.Readings() {
				emit([]string{"reading", x.Name, "state", x.Meta.State}, 1)
			}
		}},
	{"pantty_seat_health", "recover's last verdict on the seat (ok, dead, unknown = could not observe); absent without a verdict.",
		func(r Row, emit func([]string, float64)) {
			if r.Health.IsKnown() && r.Health.Verdict != nil {
				emit([]string{"verdict", *r.Health.Verdict}, 1)
			}
		}},
	{"pantty_seat_phase", "The driver loop's phase from its last heartbeat (see pantty_seat_heartbeat_stale).",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.Phase != nil {
				emit([]string{"phase", *r.Heartbeat.Phase}, 1)
			}
		}},
	{"pantty_seat_heartbeat_age_seconds", "Seconds since the driver loop's last heartbeat.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.AgeSeconds != nil {
				emit(nil, *r.Heartbeat.AgeSeconds)
			}
		}},
	{"pantty_seat_heartbeat_interval_seconds", "The interval the heartbeat declares; stale beyond twice it.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() && r.Heartbeat.IntervalSeconds != nil {
				emit(nil, *r.Heartbeat.IntervalSeconds)
			}
		}},
	{"pantty_seat_heartbeat_stale", "1 when the last heartbeat is older than twice its declared interval.",
		func(r Row, emit func([]string, float64)) {
			if r.Heartbeat.IsKnown() {
				emit(nil, b2f(r.Heartbeat.State == Stale))
			}
		}},
	{"pantty_seat_driver_live", "1 when owner.toml's holder process is alive as recorded (pid and start time).",
		func(r Row, emit func([]string, float64)) {
			if r.Driver.Live != nil {
				emit(nil, b2f(*r.Driver.Live))
			}
		}},
	{"pantty_seat_session_generation", "The harness session's generation (session.toml).",
		func(r Row, emit func([]string, float64)) {
			if r.Session.IsKnown() && r.Session.Generation != nil {
				emit(nil, float64(*r.Session.Generation))
			}
		}},
	{"pantty_seat_model_info", "The model as the harness itself reported it (never seat.toml's).",
		func(r Row, emit func([]string, float64)) {
			if r.Model.IsKnown() && r.Model.Value != nil {
				emit([]string{"model", *r.Model.Value}, 1)
			}
		}},
	{"pantty_seat_context_occupancy_tokens", "Tokens in the context window at the last reading.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Occupancy != nil {
				emit(nil, float64(*r.Context.Occupancy))
			}
		}},
	{"pantty_seat_context_floor_tokens", "The fixed floor (system prompt, tools, memory): never shrinks; absent until measured.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Floor != nil {
				emit(nil, float64(*r.Context.Floor))
			}
		}},
	{"pantty_seat_context_reclaimable_tokens", "The part a compaction can reclaim; absent until the floor is measured.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Reclaimable != nil {
				emit(nil, float64(*r.Context.Reclaimable))
			}
		}},
	{"pantty_seat_context_window_tokens", "The context window size the harness reported.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Window != nil {
				emit(nil, float64(*r.Context.Window))
			}
		}},
	{"pantty_seat_context_ratio", "Occupancy as a fraction of the window.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.Percent != nil {
				emit(nil, *r.Context.Percent/100)
			}
		}},
	{"pantty_seat_context_stale", "1 when the context reading predates the last turn end.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() {
				emit(nil, b2f(r.Context.State == Stale))
			}
		}},
	{"pantty_seat_context_age_seconds", "Seconds since the context reading was taken.",
		func(r Row, emit func([]string, float64)) {
			if r.Context.IsKnown() && r.Context.AgeSeconds != nil {
				emit(nil, *r.Context.AgeSeconds)
			}
		}},
	{"pantty_seat_inbox_depth", "Messages not yet in a final state (queued, submitting, submitted).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Depth != nil {
				emit(nil, float64(*r.Inbox.Depth))
			}
		}},
	{"pantty_seat_inbox_failed", "Stored messages in the failed state (within retention).",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Failed != nil {
				emit(nil, float64(*r.Inbox.Failed))
			}
		}},
	{"pantty_seat_inbox_mentions", "'@' mentions the harness will expand in the messages not yet final.",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.Mentions != nil {
				emit(nil, float64(*r.Inbox.Mentions))
			}
		}},
	{"pantty_seat_inbox_oldest_queued_seconds", "How long the oldest queued message has waited; absent when none is queued.",
		func(r Row, emit func([]string, float64)) {
			if r.Inbox.IsKnown() && r.Inbox.OldestQueuedSeconds != nil {
				emit(nil, *r.Inbox.OldestQueuedSeconds)
			}
		}},
	{"pantty_seat_in_flight_age_seconds", "Seconds since the in-flight message was pasted; absent when none is in flight.",
		func(r Row, emit func([]string, float64)) {
			if r.InFlight.IsKnown() && r.InFlight.ID != nil && r.InFlight.AgeSeconds != nil {
				emit(nil, *r.InFlight.AgeSeconds)
			}
		}},
	{"pantty_seat_cursor_closed", "Messages at or before the cursor (all in a final state).",
		func(r Row, emit func([]string, float64)) {
			if r.Cursor.IsKnown() && r.Cursor.Closed != nil {
				emit(nil, float64(*r.Cursor.Closed))
			}
		}},
	{"pantty_seat_last_turn_end_timestamp_seconds", "Unix time of the session's last recorded turn end.",
		func(r Row, emit func([]string, float64)) {
			if r.LastTurnEnd.IsKnown() && r.LastTurnEnd.At != nil {
				emit(nil, unix(*r.LastTurnEnd.At))
			}
		}},
	{"pantty_seat_ladder_rung_info", "The means-ladder rung the pane was last launched on (rung=\"\" without a [[ladder]]).",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.Rung != nil {
				emit([]string{"rung", *r.Ladder.Rung}, 1)
			}
		}},
	{"pantty_seat_ladder_floor_info", "recover's persisted demotion floor (rung=\"\" = the top); absent without recovery.toml.",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.Floor != nil {
				emit([]string{"rung", *r.Ladder.Floor}, 1)
			}
		}},
	{"pantty_seat_ladder_means_failures", "Unverified means recoveries on the current floor, as recover recorded them.",
		func(r Row, emit func([]string, float64)) {
			if r.Ladder.IsKnown() && r.Ladder.MeansFailures != nil {
				emit(nil, float64(*r.Ladder.MeansFailures))
			}
		}},
	{"pantty_seat_provider_wait_until_timestamp_seconds", "Unix time a provider wait holding the seat ends.",
		func(r Row, emit func([]string, float64)) {
			if r.ProviderWaits.IsKnown() {
				for _, w := range r.ProviderWaits.Waits {
					emit([]string{"provider", w.Provider}, unix(w.Until))
				}
			}
		}},
	{"pantty_seat_compaction_info", "The state of the last compaction cycle (requested, done, failed).",
		func(r Row, emit func([]string, float64)) {
			if r.Compaction.IsKnown() && r.Compaction.CycleState != nil {
				emit([]string{"cycle_state", *r.Compaction.CycleState}, 1)
			}
		}},
	{"pantty_seat_compaction_timestamp_seconds", "Unix time the last compaction cycle ended (or was requested, while it runs).",
		func(r Row, emit func([]string, float64)) {
			if r.Compaction.IsKnown() && r.Compaction.At != nil {
				emit(nil, unix(*r.Compaction.At))
			}
		}},
}

// WritePrometheus writes the rows in the Prometheus text exposition format
// (version 0.0.4): every family with its HELP and TYPE lines, every sample
// labelled seat, harness and shape. An unknown reading has no sample.
func WritePrometheus(w io.Writer, rows []Row) error {
	var b bytes.Buffer
	for _, f := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", f.name, escapeHelp(f.help), f.name)
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
	_, err := w.Write(b.Bytes())
	return err
}

// WriteTextfile writes the Prometheus form to path atomically, for
// node_exporter's textfile collector (name the file *.prom). It goes through
// seat.WriteFile with its temp file in path's own directory — the collector
// reads only *.prom, so it never sees the ".w-*" temp — and the file is private
// (0600) like every file pantty writes: the collector must run as the same
// user (or root) to read it. `pantty recover --textfile PATH` calls this after
// each sweep.
func WriteTextfile(path string, rows []Row) error {
	var b bytes.Buffer
	if err := WritePrometheus(&b, rows); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return seat.WriteFile(filepath.Dir(abs), abs, b.Bytes())
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
