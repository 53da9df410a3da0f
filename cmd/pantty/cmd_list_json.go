package main

// --json for the listings `seat list` and `seat inbox` (schema v1, docs/cli.md).
// A value that could not be read is null, never a default.

import (
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

// listedSeat is one seat of `seat list --json`.
type listedSeat struct {
	Seat        string  `json:"seat"`
	Harness     *string `json:"harness"`
	ConfigError string  `json:"config_error,omitempty"`
	Intent      *string `json:"intent"`
	Owner       *string `json:"owner"` // the live driver's holder id; null when none is live
	Phase       *string `json:"phase"`
	PhaseStale  bool    `json:"phase_stale"`
	Queued      *int    `json:"queued"` // messages not final
	Session     *string `json:"session"`
}

func seatListJSON(home string, names []string) error {
	now := time.Now()
	out := struct {
		V     int          `json:"v"`
		Home  string       `json:"home"`
		Seats []listedSeat `json:"seats"`
	}{V: jsonVersion, Home: home, Seats: []listedSeat{}}
	for _, n := range names {
		s, _ := state.Open(home, n)
		r := listedSeat{Seat: n}
		if cfg, err := s.LoadConfig(); err == nil {
			r.Harness = &cfg.Harness
		} else {
			r.ConfigError = err.Error()
		}
		if in, err := s.IntentFile().Read(); err == nil {
			r.Intent = &in.Want
		}
		if o, live, err := s.LiveOwner(); err == nil && live {
			r.Owner = &o.Holder
		}
		if hb, err := s.HeartbeatFile().Read(); err == nil {
			r.Phase, r.PhaseStale = &hb.Phase, hb.Stale(now)
		}
		if v, err := s.View(); err == nil {
			q := 0
			for _, e := range v.Open {
				if !inbox.Final(e.Status.State) {
					q++
				}
			}
			r.Queued = &q
		}
		if sess, err := s.SessionFile().Read(); err == nil {
			r.Session = &sess.ID
		}
		out.Seats = append(out.Seats, r)
	}
	printLine(out)
	return nil
}

// inboxMessage is one message of `seat inbox --json`: its state and metadata;
// the text and reply are in `seat show`.
type inboxMessage struct {
	ID          string     `json:"id"`
	State       string     `json:"state"`
	Reason      string     `json:"reason,omitempty"`
	Attempts    int        `json:"attempts"`
	Resubmits   int        `json:"resubmits"`
	Retries     int        `json:"retries"`
	From        string     `json:"from,omitempty"`
	Board       string     `json:"board,omitempty"`
	Channel     string     `json:"channel,omitempty"`
	Bytes       int        `json:"bytes"`
	EnqueuedAt  time.Time  `json:"enqueued_at"`
	SubmittedAt *time.Time `json:"submitted_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	ReplyBytes  int        `json:"reply_bytes"`
}

func seatInboxJSON(s state.Seat, es []inbox.Entry) error {
	out := struct {
		V        int            `json:"v"`
		Seat     string         `json:"seat"`
		Messages []inboxMessage `json:"messages"`
	}{V: jsonVersion, Seat: s.Name, Messages: []inboxMessage{}}
	for _, e := range es {
		m, st := e.Msg, e.Status
		out.Messages = append(out.Messages, inboxMessage{ID: m.ID, State: st.State, Reason: st.Reason, Attempts: st.Attempts,
			Resubmits: st.Resubmits, Retries: st.Retries, From: m.From, Board: m.Board, Channel: m.Channel, Bytes: len(m.Text),
			EnqueuedAt: m.EnqueuedAt, SubmittedAt: timeOrNil(st.SubmittedAt), EndedAt: timeOrNil(st.EndedAt), ReplyBytes: st.ReplyBytes})
	}
	printLine(out)
	return nil
}

// jsonFlag is the --json flag of a read command.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print one JSON object (schema v1 in docs/cli.md)"}
}
