package state

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
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
	Wait config.Duration `toml:"wait,omitempty"`
	// To is the holder (owner.toml) the request is meant for, "" for
	// whoever holds the seat: a driver with another holder refuses it. A
	// release that recover meant for the driver it judged dead must not
	// reach the driver a person's 'seat start' put there since.
	To      string    `toml:"to,omitempty"`
	FromPID int       `toml:"from_pid"`
	At      time.Time `toml:"at"`
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

// WriteEvent stores one hook event atomically as events/<ns>-<pid>-<kind>.json.
// The name sorts in arrival order, so the driver consumes events in order.
func (s Seat) WriteEvent(kind string, payload []byte, now time.Time) (string, error) {
	return s.WriteEventNote(kind, payload, nil, now)
}

// WriteEventNote is WriteEvent with pantty's own notes on what the hook did.
func (s Seat) WriteEventNote(kind string, payload []byte, note map[string]string, now time.Time) (string, error) {
	if !json.Valid(payload) {
		q, _ := json.Marshal(string(payload))
		payload = q // keep what arrived, as a JSON string, rather than lose it
	}
	ev := struct {
		Kind       string            `json:"event"`
		ReceivedAt time.Time         `json:"received_at"`
		Payload    json.RawMessage   `json:"payload"`
		Pantty     map[string]string `json:"pantty,omitempty"`
	}{kind, now.UTC(), payload, note}
	data, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%019d-%07d-%s.json", now.UnixNano(), os.Getpid(), kind)
	path := filepath.Join(s.EventsDir(), name)
	if err := fsatomic.WriteFile(s.TmpDir(), path, append(data, '\n')); err != nil {
		return "", err
	}
	return name, nil
}

// EventTime parses the arrival time encoded in an event file name.
func EventTime(name string) (time.Time, bool) {
	i := strings.IndexByte(name, '-')
	if i <= 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// PendingEvents lists unconsumed event files in arrival order.
func (s Seat) PendingEvents() ([]string, error) { return listJSON(s.EventsDir()) }

// SeenEvents lists consumed event files in arrival order.
func (s Seat) SeenEvents() ([]string, error) { return listJSON(s.SeenDir()) }

func listJSON(dir string) ([]string, error) {
	ents, err := fsafe.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// MarkSeen moves a consumed event into events/seen/ (a rename: atomic), so the
// top of events/ holds exactly the events the driver has not acted on yet.
func (s Seat) MarkSeen(name string) error {
	return os.Rename(filepath.Join(s.EventsDir(), name), filepath.Join(s.SeenDir(), name))
}

// Drop request kinds.
const (
	DropNote    = "note"    // text for the next handoff (pantty handoff note)
	DropRefresh = "refresh" // a compaction cycle at the next boundary (pantty handoff request)
)

// maxDropBytes bounds one request file: a note's maximum plus its TOML framing.
const maxDropBytes = handoff.MaxNoteBytes + 4096

// DropRequest is one request file, <id>.req in the drop directory.
type DropRequest struct {
	Kind string    `toml:"kind"`
	Text string    `toml:"text,omitempty"`
	At   time.Time `toml:"at"`
}

// DropAnswer is the driver's answer, <id>.done beside the request.
type DropAnswer struct {
	OK     bool      `toml:"ok"`
	Error  string    `toml:"error,omitempty"`
	Detail string    `toml:"detail,omitempty"`
	At     time.Time `toml:"at"`
}

// dropTimeout bounds how long a command from inside waits for the driver.
const dropTimeout = 30 * time.Second

// SendDrop writes a request into the drop directory dir (from inside the seat)
// and waits for the driver's answer. A driver that does not answer in time
// leaves the request queued: it is taken when the seat's driver next runs, and
// the caller is told so (ErrUnobservable).
func SendDrop(dir string, r DropRequest) (DropAnswer, error) {
	if r.Kind == DropNote {
		if err := ValidateNote(r.Text); err != nil {
			return DropAnswer{}, fmt.Errorf("%w: %v", ErrBadInput, err)
		}
	}
	r.At = time.Now().UTC()
	id := strings.TrimPrefix(newRequestID(), "c")
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(r); err != nil {
		return DropAnswer{}, err
	}
	done := DropAnswerFile(dir, id)
	ans, err := awaitFile(done, dropTimeout, func() error {
		// Written under a dot name and renamed: the driver takes only whole .req files.
		return fsatomic.WriteFile(dir, filepath.Join(dir, id+".req"), b.Bytes())
	})
	if errors.Is(err, errNoAnswer) {
		return ans, fmt.Errorf("%w: the seat's driver did not answer within %s; the request stays queued in %s", ErrUnobservable, dropTimeout, dir)
	}
	if err == nil {
		os.Remove(filepath.Join(dir, id+".done"))
		if !ans.OK && r.Kind == DropNote {
			return ans, fmt.Errorf("%w: refused by the seat's driver: %s", ErrBadInput, ans.Error)
		}
		if !ans.OK {
			// As `handoff request` outside isolation: the driver's refusal is a failure (1).
			return ans, fmt.Errorf("refused by the seat's driver: %s", ans.Error)
		}
	}
	return ans, err
}

// ReadDrop reads one request file without following a symlink (a planted link
// must not make the driver read another file) and within maxDropBytes.
func ReadDrop(path string) (DropRequest, error) {
	var r DropRequest
	data, err := fsafe.ReadBounded(path, maxDropBytes)
	if err != nil {
		return r, err
	}
	md, err := toml.Decode(string(data), &r)
	if err != nil {
		return r, err
	}
	if un := md.Undecoded(); len(un) > 0 {
		return r, fmt.Errorf("unknown key %q", un[0].String())
	}
	switch r.Kind {
	case DropNote:
		return r, ValidateNote(r.Text)
	case DropRefresh:
		return r, nil
	}
	return r, fmt.Errorf("kind %q: want %s or %s", r.Kind, DropNote, DropRefresh)
}

// PendingDrops lists the request files waiting in dir, oldest name first.
func PendingDrops(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".req") && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out, nil
}

// RequestFile is control/<id>.toml: a control request waiting for the driver.
func (s Seat) RequestFile(id string) statedir.File[Request] {
	return bind[Request](s, s.path("control", id+".toml"))
}

// ResultFile is control/done/<id>.toml: the driver's answer to request id.
func (s Seat) ResultFile(id string) statedir.File[Result] {
	return bind[Result](s, s.path("control", "done", id+".toml"))
}

// DropAnswerFile is <drop>/<id>.done: the driver's answer to drop request id
// (written in the drop directory itself, which the sandbox can write).
func DropAnswerFile(dir, id string) statedir.File[DropAnswer] {
	return statedir.Bind[DropAnswer](dir, filepath.Join(dir, id+".done"), ReadRegular)
}
