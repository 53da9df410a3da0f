package seat

import (
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// Withdrawal is what `pantty seat drop` did: the messages it dropped, and the
// ones it left with the reason (not queued: in flight or final; pantty's own
// prompt).
type Withdrawal struct {
	Dropped []string // up to the first maxNamed; Count is all of them
	Count   int
	Left    []string // "ID (why)"
	summary string   // the driver's own Summary, when it did the dropping
}

// maxNamed bounds how many dropped ids a summary names (a --queued drop may
// take tens of thousands).
const maxNamed = 10

// Add records one dropped id.
func (w *Withdrawal) Add(id string) {
	if w.Count++; len(w.Dropped) < maxNamed {
		w.Dropped = append(w.Dropped, id)
	}
}

// Summary says it in one line, the way the driver answers and the CLI prints.
func (w Withdrawal) Summary() string {
	if w.summary != "" {
		return w.summary
	}
	s := fmt.Sprintf("dropped %d queued message(s)", w.Count)
	if w.Count > 0 {
		s += ": " + strings.Join(w.Dropped, " ")
		if w.Count > len(w.Dropped) {
			s += " …"
		}
	}
	if len(w.Left) > 0 {
		s += "; not dropped: " + strings.Join(w.Left, ", ")
	}
	return s
}

// WithdrawStatus is the one rule for dropping: only a queued board message,
// never one in flight or final, and never pantty's own prompt (a probe or a
// refresh waits for its own answer). The message becomes failed with reason
// dropped, a final state: the cursor may pass it, the driver never delivers
// it, and 'pantty seat retry' queues it again.
func WithdrawStatus(s state.Seat, m inbox.Stored, st *inbox.Status, now time.Time) error {
	switch {
	case m.From == guard.ReservedSender:
		return fmt.Errorf("pantty's own prompt")
	case st.State != inbox.StateQueued:
		return fmt.Errorf("%s", st.State)
	}
	st.ID = m.ID
	st.State = inbox.StateFailed
	st.Reason = inbox.ReasonDropped
	st.Detail = fmt.Sprintf("dropped by 'pantty seat drop' before delivery; 'pantty seat retry %s %s' queues it again", s.Name, m.ID)
	st.EndedAt = now.UTC()
	return nil
}

// Withdraw drops queued messages (ids, or every queued one with all): through
// the driver when one is live (it owns the inbox state and must not deliver
// them), directly under the lock otherwise, so no driver starts meanwhile.
func Withdraw(s state.Seat, ids []string, all bool) (Withdrawal, error) {
	for _, id := range ids {
		if !guard.ValidID(id) {
			return Withdrawal{}, fmt.Errorf("%w: bad message id %q", state.ErrBadInput, id)
		}
	}
	if _, live, _ := s.LiveOwner(); live {
		v, err := s.View()
		if err != nil {
			return Withdrawal{}, fmt.Errorf("%w: seat %q: inbox: %v", state.ErrUnobservable, s.Name, err)
		}
		// Each status is an fsynced write in the driver's loop: give it time
		// for as many as may be dropped.
		timeout := 15*time.Second + time.Duration(len(v.Open))*20*time.Millisecond
		res, err := s.Ask(state.Request{Kind: state.CtlWithdraw, MsgIDs: ids, All: all}, timeout)
		if err != nil {
			return Withdrawal{}, err
		}
		return Withdrawal{Count: res.Dropped, Left: res.Left, summary: res.Detail}, nil
	}
	lock, err := Acquire(s)
	if err != nil {
		return Withdrawal{}, err
	}
	defer lock.Release()
	var w Withdrawal
	drop := func(m inbox.Stored, st inbox.Status) error {
		if err := WithdrawStatus(s, m, &st, time.Now()); err != nil {
			w.Left = append(w.Left, fmt.Sprintf("%s (%v)", m.ID, err))
			return nil
		}
		if err := s.WriteStatus(st); err != nil {
			return fmt.Errorf("seat %q: record %s as dropped: %w", s.Name, m.ID, err)
		}
		w.Add(m.ID)
		return nil
	}
	if all {
		v, err := s.View()
		if err != nil {
			return w, fmt.Errorf("%w: seat %q: inbox: %v", state.ErrUnobservable, s.Name, err)
		}
		for _, e := range v.Open {
			if e.SetAside != "" || e.Status.State != inbox.StateQueued || e.Msg.From == guard.ReservedSender {
				continue
			}
			if err := drop(e.Msg, e.Status); err != nil {
				return w, err
			}
		}
	}
	for _, id := range ids {
		m, err := s.ReadStored(id)
		if err != nil {
			w.Left = append(w.Left, fmt.Sprintf("%s (unreadable: %v)", id, err))
			continue
		}
		st, err := s.ReadStatus(id)
		if err != nil {
			w.Left = append(w.Left, fmt.Sprintf("%s (status unreadable: %v)", id, err))
			continue
		}
		if err := drop(m, st); err != nil {
			return w, err
		}
	}
	return w, nil
}
