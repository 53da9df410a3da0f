package main

// `seat send --wait`: the board door's answer. A script sends work and gets the
// model's reply back on stdout (docs/cli.md, "seat send --wait").

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// jsonVersion is the "v" of every JSON object pantty prints (result lines,
// events, --json listings); it changes only when a field changes meaning or
// goes away. Added fields do not change it.
const jsonVersion = 1

// resultLine is one message's outcome as `seat send --wait --json|--lines|--jsonl`
// prints it: schema v1, documented in docs/cli.md.
type resultLine struct {
	V              int        `json:"v"`
	Seat           string     `json:"seat"`
	ID             string     `json:"id"`
	State          string     `json:"state"`
	Reason         string     `json:"reason,omitempty"`
	Detail         string     `json:"detail,omitempty"`
	Reply          string     `json:"reply"`
	ReplyBytes     int        `json:"reply_bytes"`
	ReplyTruncated bool       `json:"reply_truncated"`
	TimedOut       bool       `json:"timed_out"`
	Unknown        string     `json:"unknown,omitempty"` // why the state could not be observed
	SubmittedAt    *time.Time `json:"submitted_at,omitempty"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
}

// timeOrNil keeps an unrecorded time out of JSON instead of printing year 1.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// outcomeResult turns a Waiter's outcome into a result line, reading the reply
// of a message that ended.
func outcomeResult(s state.Seat, o seat.Outcome) resultLine {
	st := o.Status
	r := resultLine{V: jsonVersion, Seat: s.Name, ID: o.ID, State: st.State, Reason: st.Reason, Detail: st.Detail,
		TimedOut: o.TimedOut, SubmittedAt: timeOrNil(st.SubmittedAt), EndedAt: timeOrNil(st.EndedAt)}
	if o.Err != nil {
		r.State, r.Unknown = "unknown", o.Err.Error()
		return r
	}
	if inbox.Final(st.State) {
		rep, err := s.ReadReply(st)
		if err != nil {
			r.Unknown = err.Error()
		}
		r.Reply, r.ReplyBytes, r.ReplyTruncated = rep.Text, rep.Bytes, rep.Truncated
	}
	return r
}

// code is the exit code of one result: 0 processed, 1 failed, 4 not final
// (timed out) or unknown.
func (r resultLine) code() int {
	switch {
	case r.Unknown != "", r.TimedOut:
		return exitUnknown
	case r.State == inbox.StateFailed:
		return exitFailed
	}
	return exitOK
}

// waitOne waits for one stored message and prints its reply (or, with asJSON,
// its result line); the error carries the exit code.
func waitOne(s state.Seat, wt *seat.Waiter, id string, timeout time.Duration, asJSON bool) error {
	defer noteHolds(s, id, os.Stderr)()
	wt.Add(id, deadlineOf(timeout))
	r := outcomeResult(s, <-wt.Outcomes())
	if asJSON {
		printLine(r)
	} else if r.State == inbox.StateProcessed {
		os.Stdout.WriteString(r.Reply)
		if !strings.HasSuffix(r.Reply, "\n") {
			os.Stdout.WriteString("\n")
		}
	}
	if r.ReplyTruncated && r.State == inbox.StateProcessed {
		fmt.Fprintf(os.Stderr, "pantty: the reply of %s is cut: %d of %d bytes kept\n", id, len(r.Reply), r.ReplyBytes)
	}
	return resultErr(s, r, timeout)
}

// resultErr is the one stderr line and exit code of a result that is not
// "processed"; nil for processed.
func resultErr(s state.Seat, r resultLine, timeout time.Duration) error {
	switch r.code() {
	case exitUnknown:
		if r.TimedOut {
			return codedError{exitUnknown, fmt.Sprintf("message %s still %s after %s; it stays in the queue (wait again: pantty seat send %s --id %s --wait)",
				r.ID, r.State, timeout, s.Name, r.ID)}
		}
		return codedError{exitUnknown, fmt.Sprintf("message %s: could not observe: %s", r.ID, strings.TrimPrefix(r.Unknown, state.ErrUnobservable.Error()+": "))}
	case exitFailed:
		why := r.Reason
		if r.Detail != "" {
			why += ": " + r.Detail
		}
		return codedError{exitFailed, fmt.Sprintf("message %s failed (%s)", r.ID, why)}
	}
	return nil
}

func deadlineOf(timeout time.Duration) time.Time {
	if timeout <= 0 {
		return time.Time{}
	}
	return time.Now().Add(timeout)
}

// stdoutMu serializes lines written by the stream reader and the result printer.
var stdoutMu sync.Mutex

// printLine prints v as one compact JSON line, whole (lines from two goroutines
// never interleave).
func printLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"v":%d,"error":%q}`, jsonVersion, err.Error()))
	}
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

// streamWaiter prints a result line for every distinct id of a --lines/--jsonl
// stream as it settles, while the stream goes on.
type streamWaiter struct {
	s       state.Seat
	wt      *seat.Waiter
	timeout time.Duration
	mu      sync.Mutex
	seen    map[string]bool
	added   int
	worst   int // highest exit code among printed results: 4 over 1 over 0
	printed chan struct{}
	noted   func() // ends the hold notes (noteHolds)
}

func newStreamWaiter(s state.Seat, wt *seat.Waiter, timeout time.Duration) *streamWaiter {
	sw := &streamWaiter{s: s, wt: wt, timeout: timeout, seen: map[string]bool{}, printed: make(chan struct{}, 1<<16),
		noted: noteHolds(s, "every message", os.Stderr)}
	go func() {
		for o := range wt.Outcomes() {
			r := outcomeResult(s, o)
			printLine(r)
			sw.mu.Lock()
			if c := r.code(); c > sw.worst {
				sw.worst = c
			}
			sw.mu.Unlock()
			sw.printed <- struct{}{}
		}
	}()
	return sw
}

// follow starts waiting for id unless this stream already follows it.
func (sw *streamWaiter) follow(id string) {
	sw.mu.Lock()
	if sw.seen[id] {
		sw.mu.Unlock()
		return
	}
	sw.seen[id] = true
	sw.added++
	sw.mu.Unlock()
	sw.wt.Add(id, deadlineOf(sw.timeout))
}

// finish waits for every followed id's result and returns the worst exit code.
func (sw *streamWaiter) finish() int {
	defer sw.noted()
	sw.mu.Lock()
	n := sw.added
	sw.mu.Unlock()
	for range n {
		<-sw.printed
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.worst
}
