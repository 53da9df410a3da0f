package main

// `seat show NAME ID`: one message with everything recorded about it: what was
// sent, its state and when each step happened, the evidence that moved it,
// what each submission really pasted, and the reply.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func seatShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "one message: its text, states with times, evidence, submissions and reply",
		ArgsUsage: "NAME ID | HOST:NAME ID",
		Description: "Exit 0 shown, 2 bad usage, 4 a record could not be read, 5 no such seat or message.\n" +
			"--json prints one object (schema v1 in docs/cli.md).",
		Flags:  []cli.Flag{jsonFlag(), hostFlag()},
		Action: seatShow,
	}
}

// shownMessage is `seat show --json`, schema v1.
type shownMessage struct {
	V       int    `json:"v"`
	Seat    string `json:"seat"`
	ID      string `json:"id"`
	From    string `json:"from,omitempty"`
	Board   string `json:"board,omitempty"`
	Channel string `json:"channel,omitempty"`
	// Transport is the path the seat runs on (state.TransportLabel:
	// "app-server (auto)" for a choice of transport = "auto").
	Transport string `json:"transport,omitempty"`
	Text      string `json:"text"`
	State     string `json:"state"`
	Reason    string `json:"reason,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// Times of each step that happened; a step that did not is left out.
	EnqueuedAt  time.Time  `json:"enqueued_at"`
	SubmittedAt *time.Time `json:"submitted_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	NotBefore   *time.Time `json:"not_before,omitempty"`
	Attempts    int        `json:"attempts"`
	Resubmits   int        `json:"resubmits"`
	Retries     int        `json:"retries"`
	Evidence    evidence   `json:"evidence"`
	Submissions []shownSub `json:"submissions"`
	Reply       shownReply `json:"reply"`
}

// evidence names the records that moved the message (paths relative to the seat).
type evidence struct {
	Submission string `json:"submission,omitempty"` // the UserPromptSubmit event bound by the header's nonce
	TurnEnd    string `json:"turn_end,omitempty"`   // the event (or envelope) that closed the turn
	PromptID   string `json:"prompt_id,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Nonce      string `json:"nonce,omitempty"`
}

// shownSub is one paste of the message (artifacts/ID.N.toml).
type shownSub struct {
	Attempt  int       `json:"attempt"`
	Resubmit int       `json:"resubmit"`
	SentAt   time.Time `json:"sent_at"`
	Bytes    int       `json:"bytes"`
	Mentions int       `json:"mentions"`
	SHA256   string    `json:"sha256"`
	Nonce    string    `json:"nonce"`
	Artifact string    `json:"artifact"`
}

type shownReply struct {
	Text      string `json:"text"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"`
	File      string `json:"file,omitempty"` // inbox/replies/ID.txt when the reply came from there
}

func seatShow(c *cli.Context) error {
	if c.NArg() == 2 {
		remote, err := remoteSeat(c, c.Args().First(), func(name string) []string {
			return append([]string{"seat", "show", name, c.Args().Get(1)}, boolArgs(c, "json")...)
		})
		if remote || err != nil {
			return err
		}
	}
	s, id, err := seatAndID(c)
	if err != nil {
		return err
	}
	if !guard.ValidID(id) {
		return usageErr("bad message id %q", id)
	}
	m, err := showMessage(s, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		printLine(m)
		return nil
	}
	showText(m)
	return nil
}

// showMessage gathers every record of message id.
func showMessage(s state.Seat, id string) (shownMessage, error) {
	msg, err := s.ReadStored(id)
	if errors.Is(err, fs.ErrNotExist) {
		return shownMessage{}, noMessage(s, id)
	}
	if err != nil {
		return shownMessage{}, fmt.Errorf("%w: %v", state.ErrUnobservable, err)
	}
	st, err := s.ReadStatus(id)
	if err != nil {
		return shownMessage{}, fmt.Errorf("%w: %v", state.ErrUnobservable, err)
	}
	m := shownMessage{V: jsonVersion, Seat: s.Name, ID: id, From: msg.From, Board: msg.Board, Channel: msg.Channel, Text: msg.Text,
		State: st.State, Reason: st.Reason, Detail: st.Detail, EnqueuedAt: msg.EnqueuedAt,
		SubmittedAt: timeOrNil(st.SubmittedAt), EndedAt: timeOrNil(st.EndedAt), UpdatedAt: timeOrNil(st.UpdatedAt),
		NotBefore: timeOrNil(st.NotBefore), Attempts: st.Attempts, Resubmits: st.Resubmits, Retries: st.Retries,
		Evidence:    evidence{Submission: st.Evidence, TurnEnd: st.TurnEnd, PromptID: st.PromptID, SessionID: st.SessionID, Nonce: st.Nonce},
		Submissions: []shownSub{}}
	if cfg, err := s.ConfigFile().Read(); err == nil {
		sess, _ := s.SessionFile().Read()
		m.Transport = state.TransportLabel(cfg, sess)
	}
	rep, err := s.ReadReply(st)
	if err != nil {
		return m, fmt.Errorf("%w: %v", state.ErrUnobservable, err)
	}
	m.Reply = shownReply{Text: rep.Text, Bytes: rep.Bytes, Truncated: rep.Truncated}
	if rep.FromFile {
		m.Reply.File = rel(s, s.ReplyPath(id))
	}
	for _, f := range s.ArtifactFiles(id) {
		a, err := f.Read()
		if err != nil {
			return m, fmt.Errorf("%w: %v", state.ErrUnobservable, err)
		}
		if a.ID != id { // another message whose id extends this one ("a" and "a.b")
			continue
		}
		m.Submissions = append(m.Submissions, shownSub{Attempt: a.Attempt, Resubmit: a.Resubmit, SentAt: a.SentAt, Bytes: a.Bytes,
			Mentions: a.Mentions, SHA256: a.SHA256, Nonce: a.Nonce, Artifact: rel(s, f.Path())})
	}
	sort.Slice(m.Submissions, func(i, j int) bool { return m.Submissions[i].Attempt < m.Submissions[j].Attempt })
	return m, nil
}

func rel(s state.Seat, p string) string {
	if r, err := filepath.Rel(s.Dir, p); err == nil {
		return r
	}
	return p
}

// showText prints the message for a person: a header of facts, the steps in
// time order, then the text and the reply verbatim.
func showText(m shownMessage) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, termtext.Line(v))
		}
	}
	row("message", m.ID)
	row("seat", m.Seat)
	row("from", m.From)
	row("board", m.Board)
	row("channel", m.Channel)
	row("transport", m.Transport)
	state := m.State
	if m.Reason != "" {
		state += " (" + m.Reason + ")"
	}
	row("state", state)
	row("detail", m.Detail)
	row("counts", fmt.Sprintf("%d attempt(s), %d resubmission(s), %d retry(ies)", m.Attempts, m.Resubmits, m.Retries))
	tw.Flush()

	fmt.Println("\nsteps:")
	tw = tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	fmt.Fprintf(tw, "  %s\tqueued\t\n", stamp(m.EnqueuedAt))
	for _, s := range m.Submissions {
		what := fmt.Sprintf("pasted (attempt %d", s.Attempt)
		if s.Resubmit > 0 {
			what += ", marked resubmission"
		}
		fmt.Fprintf(tw, "  %s\t%s)\t%s: %d bytes, %d @mention(s), sha256 %.12s\n", stamp(s.SentAt), what, s.Artifact, s.Bytes, s.Mentions, s.SHA256)
	}
	if m.SubmittedAt != nil {
		fmt.Fprintf(tw, "  %s\tsubmitted\tevidence %s, prompt %s, session %s\n", stamp(*m.SubmittedAt), dash(m.Evidence.Submission), dash(m.Evidence.PromptID), dash(m.Evidence.SessionID))
	}
	if m.EndedAt != nil {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", stamp(*m.EndedAt), m.State, endedBy(m))
	} else if m.NotBefore != nil {
		fmt.Fprintf(tw, "  %s\tnot before\t(%s)\n", stamp(*m.NotBefore), notBeforeWhy(m.Reason))
	}
	tw.Flush()

	fmt.Printf("\ntext (%d bytes):\n%s\n", len(m.Text), termtext.Block(strings.TrimRight(m.Text, "\n")))
	switch {
	case m.Reply.Bytes == 0 && m.Reply.Text == "":
		fmt.Println("\nreply: none recorded")
	default:
		note := ""
		if m.Reply.Truncated {
			note = fmt.Sprintf(", cut to %d", len(m.Reply.Text))
		}
		where := m.Reply.File
		if where == "" {
			where = "the status preview"
		}
		fmt.Printf("\nreply (%d bytes%s, from %s):\n%s\n", m.Reply.Bytes, note, where, termtext.Block(strings.TrimRight(m.Reply.Text, "\n")))
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// endedBy is what closed a final message, for its last step: the turn end
// that proved it, or, when no turn end did, who ended it ("-" told a person
// nothing about a `seat cancel`).
func endedBy(m shownMessage) string {
	if m.Evidence.TurnEnd != "" {
		return "turn end " + m.Evidence.TurnEnd
	}
	switch m.Reason {
	case inbox.ReasonCancelled:
		return "cancelled by pantty seat cancel: the turn was interrupted, no turn end"
	case inbox.ReasonCeiling:
		return "cancelled by the driver at seat.toml's turn_ceiling: no turn end"
	case inbox.ReasonDropped:
		return "withdrawn by pantty seat drop before delivery"
	case "":
		return "no turn end"
	}
	return "no turn end: " + m.Reason
}

// notBeforeWhy names what holds a queued message until its not-before time,
// by the reason the driver recorded when it put the message back.
func notBeforeWhy(reason string) string {
	switch reason {
	case hookwire.ReasonTransient:
		return "next probe of a transient error"
	case hookwire.ReasonMeansFault:
		return "next probe of a means fault"
	case outage.ReasonProviderRefusal:
		return "a provider refusal"
	}
	return "a pause before the next try"
}
