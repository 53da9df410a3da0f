package seat

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/statedir"
)

// Control request kinds: every command other than the driver that wants something
// done to the pane asks the driver through control/, because only the lock
// holder writes to its pane (docs/intake.md, "The two doors").
const (
	CtlCommand = "command" // run an allow-listed harness command (command door)
	CtlCancel  = "cancel"  // cancel the in-flight turn
	CtlStop    = "stop"    // stop the harness and the driver
	CtlRelease = "release" // leave the harness running and exit (takeover)
	CtlRetry   = "retry"   // re-queue a failed message
	// CtlWithdraw drops queued messages before delivery (`pantty seat drop`).
	CtlWithdraw = "withdraw"
	CtlCompact  = "compact" // run the compaction cycle (materialize, /compact, re-inject)
	CtlProbe    = "probe"   // prove capability: a turn must really run
	CtlRefresh  = "refresh" // the seat asks for a refresh (pantty handoff request, from inside)
	CtlRelay    = "relay"   // relay on/off around `seat attach`; force-off from `seat relay --off`
)

var ctlKinds = map[string]bool{CtlCommand: true, CtlCancel: true, CtlStop: true, CtlRelease: true, CtlRetry: true, CtlWithdraw: true,
	CtlCompact: true, CtlProbe: true, CtlRefresh: true, CtlRelay: true}

// Request is control/<id>.toml, schema-checked by the driver before it acts.
type Request struct {
	ID      string `toml:"id"`
	Kind    string `toml:"kind"`
	Command string `toml:"command,omitempty"` // CtlCommand: name without '/'
	Args    string `toml:"args,omitempty"`    // CtlCommand: its arguments
	MsgID   string `toml:"msg_id,omitempty"`  // CtlRetry
	// MsgIDs and All name what CtlWithdraw drops: these ids, or every queued
	// board message.
	MsgIDs []string `toml:"msg_ids,omitempty"`
	All    bool     `toml:"all,omitempty"`
	// Wait bounds how long a command or compaction may wait for the seat to be
	// free before it is refused unsent (0: DefaultCommandWait).
	Wait    config.Duration `toml:"wait,omitempty"`
	FromPID int             `toml:"from_pid"`
	At      time.Time       `toml:"at"`
}

// Validate is the schema check the driver applies to every request it reads.
func (r Request) Validate() error {
	if !ctlKinds[r.Kind] {
		return fmt.Errorf("unknown request kind %q", r.Kind)
	}
	if !strings.HasPrefix(r.ID, "c") || len(r.ID) > 64 {
		return fmt.Errorf("bad request id %q", r.ID)
	}
	if r.Kind == CtlRetry && !guard.ValidID(r.MsgID) {
		return fmt.Errorf("retry: bad message id %q", r.MsgID)
	}
	if r.Kind == CtlWithdraw {
		if len(r.MsgIDs) == 0 && !r.All {
			return fmt.Errorf("withdraw: no message named")
		}
		for _, id := range r.MsgIDs {
			if !guard.ValidID(id) {
				return fmt.Errorf("withdraw: bad message id %q", id)
			}
		}
	}
	if r.Kind == CtlCommand && r.Command == "" {
		return fmt.Errorf("command: no command named")
	}
	return nil
}

// Result is control/done/<id>.toml: the driver's answer to one request.
type Result struct {
	ID     string `toml:"id"`
	OK     bool   `toml:"ok"`
	Error  string `toml:"error,omitempty"`
	Detail string `toml:"detail,omitempty"`
	// Dropped and Left answer CtlWithdraw: how many were dropped (Detail
	// names them when they are few), and the ones named but left as they
	// were, with why ("ID (submitting)").
	Dropped int      `toml:"dropped,omitempty"`
	Left    []string `toml:"left,omitempty"`
	// Unknown: the driver could not observe the outcome (the caller exits 4).
	Unknown bool      `toml:"unknown,omitempty"`
	At      time.Time `toml:"at"`
}

func newRequestID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return fmt.Sprintf("c%d-%s", time.Now().UnixNano(), hex.EncodeToString(b))
}

// Ask drops a request for the seat's driver and waits for its result. It watches
// control/done first and then checks, so a result written in between is not
// missed. A timeout means the answer is unknown (ErrUnobservable).
func (s Seat) Ask(r Request, timeout time.Duration) (Result, error) {
	r.ID = newRequestID()
	r.FromPID = os.Getpid()
	r.At = time.Now().UTC()
	if err := r.Validate(); err != nil {
		return Result{}, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	if err := s.Ensure(); err != nil {
		return Result{}, err
	}
	req := s.RequestFile(r.ID)
	res, err := awaitFile(s.ResultFile(r.ID), timeout, func() error { return req.Write(r) })
	if errors.Is(err, errNoAnswer) {
		os.Remove(req.Path())
		return Result{}, fmt.Errorf("%w: seat %q: the driver did not answer the %s request within %s", ErrUnobservable, s.Name, r.Kind, timeout)
	}
	if err == nil && !res.OK && res.Unknown {
		return res, fmt.Errorf("%w: seat %q: %s: %s", ErrUnobservable, s.Name, r.Kind, strings.TrimPrefix(res.Error, ErrUnobservable.Error()+": "))
	}
	if err == nil && !res.OK {
		return res, fmt.Errorf("seat %q: %s: %s", s.Name, r.Kind, res.Error)
	}
	return res, err
}

// errNoAnswer is awaitFile's timeout.
var errNoAnswer = errors.New("no answer")

// awaitFile runs send, then waits up to timeout for the answer file f and
// reads it. It watches f's directory before sending and checks after, so an
// answer written in between is not missed.
func awaitFile[T any](f statedir.File[T], timeout time.Duration, send func() error) (T, error) {
	var zero T
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return zero, err
	}
	defer w.Close()
	if err := w.Add(filepath.Dir(f.Path())); err != nil {
		return zero, err
	}
	if err := send(); err != nil {
		return zero, err
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		v, err := f.Read()
		if !errors.Is(err, fs.ErrNotExist) {
			return v, err
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			if err != nil && !errors.Is(err, fsnotify.ErrEventOverflow) {
				return zero, err
			}
		case <-deadline.C:
			return zero, errNoAnswer
		}
	}
}

// PendingRequests lists request files waiting in control/, oldest first.
func (s Seat) PendingRequests() ([]string, error) {
	ents, err := os.ReadDir(s.ControlDir())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".toml") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
