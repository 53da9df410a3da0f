package crashtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/handoff"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// A writer is one state file as pantty writes it: write stores version v
// through the function pantty itself uses for that file, and read returns the
// version a reader sees through pantty's own reader — 0 for "not there yet" on
// a file a write creates (create: true), 1 for the old content, 2 for the new.
// Anything else (a decode error, a torn or foreign content) is an error.
type writer struct {
	name   string
	create bool // the file does not exist before the write (old = absent)
	write  func(s state.Seat, v int) error
	read   func(s state.Seat) (int, error)
}

// seatWithOld opens and lays out a seat under home and, unless the writer
// creates its file, writes the old version (1) there first.
func seatWithOld(t *testing.T, home string, w writer) state.Seat {
	t.Helper()
	s, err := state.Open(home, "crash")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ensure(); err != nil {
		t.Fatal(err)
	}
	if !w.create {
		if err := w.write(s, 1); err != nil {
			t.Fatalf("write the old version: %v", err)
		}
	}
	return s
}

// pad makes every content span several pages, so a torn write would show.
var pad = strings.Repeat("pantty crash-consistency padding. ", 400)

// version reads a version number back, refusing anything but 1 or 2.
func version(n int, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	if n != 1 && n != 2 {
		return 0, fmt.Errorf("read version %d: neither the old content nor the new", n)
	}
	return n, nil
}

// absent maps "no such file" to version 0 for writers that create a file.
func absent(n int, err error) (int, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	return version(n, err)
}

func atoi(s string) int { n, _ := strconv.Atoi(strings.TrimSuffix(s, pad)); return n }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// writers lists every state file pantty writes (docs/state.md), each with the
// writer and reader pantty uses for it.
var writers = []writer{
	{name: "inbox/status", write: func(s state.Seat, v int) error {
		return s.WriteStatus(inbox.Status{ID: "m1", State: inbox.StateSubmitted, Attempts: v, Detail: pad})
	}, read: func(s state.Seat) (int, error) {
		st, err := s.ReadStatus("m1")
		if err == nil && st.Detail != pad {
			return 0, fmt.Errorf("detail torn (%d bytes)", len(st.Detail))
		}
		return version(st.Attempts, err)
	}},
	{name: "cursor.toml", write: func(s state.Seat, v int) error {
		return s.CursorFile().Write(inbox.Cursor{Seq: int64(v), ID: "m" + strconv.Itoa(v), State: inbox.StateProcessed, ClosedBy: pad, Closed: v})
	}, read: func(s state.Seat) (int, error) {
		c, err := s.CursorFile().Read()
		if err == nil && (c.ID != "m"+strconv.Itoa(c.Closed) || c.ClosedBy != pad) {
			return 0, fmt.Errorf("cursor mixes versions: %+v", c)
		}
		return version(c.Closed, err)
	}},
	{name: "session.toml", write: func(s state.Seat, v int) error {
		return s.SessionFile().Write(state.Session{Harness: "sim", ID: "6f1b0c7e-0000-4000-8000-000000000001", Generation: 1, Why: pad, Launches: v})
	}, read: func(s state.Seat) (int, error) {
		x, err := s.SessionFile().Read()
		if err == nil && x.Why != pad {
			return 0, errors.New("why torn")
		}
		return version(x.Launches, err)
	}},
	{name: "owner.toml", write: func(s state.Seat, v int) error {
		return s.OwnerFile().Write(state.Owner{Holder: "h-" + strconv.Itoa(v) + pad, PID: v, Started: t0})
	}, read: func(s state.Seat) (int, error) {
		o, err := s.OwnerFile().Read()
		if err == nil && o.Holder != "h-"+strconv.Itoa(o.PID)+pad {
			return 0, errors.New("holder torn")
		}
		return version(o.PID, err)
	}},
	{name: "intent.toml", write: func(s state.Seat, v int) error {
		return s.SetIntent(map[int]string{1: state.IntentStopped, 2: state.IntentRunning}[v], strconv.Itoa(v)+pad)
	}, read: func(s state.Seat) (int, error) {
		in, err := s.IntentFile().Read()
		if err == nil && in.Want != map[int]string{1: state.IntentStopped, 2: state.IntentRunning}[atoi(in.By)] {
			return 0, fmt.Errorf("intent mixes versions: %+v", in)
		}
		return version(atoi(in.By), err)
	}},
	{name: "heartbeat.toml", write: func(s state.Seat, v int) error {
		return s.HeartbeatFile().Write(state.Heartbeat{At: t0, Phase: state.PhaseIdle, Interval: config.Duration{Duration: time.Second}, PID: v, Waiting: pad})
	}, read: func(s state.Seat) (int, error) {
		h, err := s.HeartbeatFile().Read()
		if err == nil && h.Waiting != pad {
			return 0, errors.New("waiting torn")
		}
		return version(h.PID, err)
	}},
	{name: "context.toml", write: func(s state.Seat, v int) error {
		return s.ContextFile().Write(state.Context{Occupancy: v, Source: pad, ReadAt: t0})
	}, read: func(s state.Seat) (int, error) {
		c, err := s.ContextFile().Read()
		if err == nil && c.Source != pad {
			return 0, errors.New("source torn")
		}
		return version(c.Occupancy, err)
	}},
	{name: "handoff/cycle.toml", write: func(s state.Seat, v int) error {
		return s.CycleFile().Write(state.Cycle{ID: strconv.Itoa(v), State: "requested", Reason: pad, Requested: t0})
	}, read: func(s state.Seat) (int, error) {
		c, err := s.CycleFile().Read()
		if err == nil && c.Reason != pad {
			return 0, errors.New("reason torn")
		}
		return version(atoi(c.ID), err)
	}},
	{name: "handoff/inject.toml", write: func(s state.Seat, v int) error {
		return s.InjectFile().Write(state.Inject{SessionID: strconv.Itoa(v), Why: pad, At: t0})
	}, read: func(s state.Seat) (int, error) {
		in, err := s.InjectFile().Read()
		if err == nil && in.Why != pad {
			return 0, errors.New("why torn")
		}
		return version(atoi(in.SessionID), err)
	}},
	{name: "mode.toml", write: func(s state.Seat, v int) error {
		return s.ModeFile().Write(state.Mode{Mode: "direct", Since: t0, Why: strconv.Itoa(v) + pad})
	}, read: func(s state.Seat) (int, error) {
		m, err := s.ModeFile().Read()
		return version(atoi(m.Why), err)
	}},
	{name: "activity.toml", write: func(s state.Seat, v int) error {
		return s.ActivityFile().Write(state.Activity{Tool: "Bash", What: strconv.Itoa(v) + pad, Phase: "pre", At: t0})
	}, read: func(s state.Seat) (int, error) {
		a, err := s.ActivityFile().Read()
		return version(atoi(a.What), err)
	}},
	{name: "recovery.toml", write: func(s state.Seat, v int) error {
		return s.RecoveryFile().Write(state.Recovery{Revived: v, LastResult: pad})
	}, read: func(s state.Seat) (int, error) {
		r, err := s.RecoveryFile().Read()
		if err == nil && r.LastResult != pad {
			return 0, errors.New("last result torn")
		}
		return version(r.Revived, err)
	}},
	{name: "cleanup.toml", write: func(s state.Seat, v int) error {
		return s.CleanupFile().Write(state.Cleanup{RequestedAt: t0, By: pad, Attempts: v})
	}, read: func(s state.Seat) (int, error) {
		c, err := s.CleanupFile().Read()
		if err == nil && c.By != pad {
			return 0, errors.New("by torn")
		}
		return version(c.Attempts, err)
	}},
	{name: "launch.toml", write: func(s state.Seat, v int) error {
		return s.LaunchFile().Write(state.LaunchFile{Argv: []string{"pantty", "sim", pad}, Dir: strconv.Itoa(v)})
	}, read: func(s state.Seat) (int, error) {
		lf, err := s.LaunchFile().Read()
		if err == nil && (len(lf.Argv) != 3 || lf.Argv[2] != pad) {
			return 0, errors.New("argv torn")
		}
		return version(atoi(lf.Dir), err)
	}},
	{name: "health.toml (recover)", write: func(s state.Seat, v int) error {
		return state.HealthFile(s).Write(state.Health{At: t0, Verdict: "ok", Reason: pad, Launches: v})
	}, read: func(s state.Seat) (int, error) {
		h, err := state.ReadHealth(s)
		if err == nil && h.Reason != pad {
			return 0, errors.New("reason torn")
		}
		return version(h.Launches, err)
	}},
	{name: "providers.toml (flock + write)", write: func(s state.Seat, v int) error {
		return outage.RecordBlock(s.Home, "sim", state.Block{Until: time.Now().Add(time.Hour), Since: t0, Error: "rate_limit", Text: strconv.Itoa(v) + pad, Seat: s.Name}, time.Now())
	}, read: func(s state.Seat) (int, error) {
		b, err := outage.ReadBlocks(s.Home)
		return version(atoi(b["sim"].Text), err)
	}},
	{name: "facts/sim-resident.toml", write: func(s state.Seat, v int) error {
		if err := os.MkdirAll(filepath.Dir(state.FactsPath(s.Home, "sim", config.ShapeResident)), fsatomic.DirMode); err != nil {
			return err
		}
		return fsatomic.WriteState(state.HomeTmpDir(s.Home), state.FactsPath(s.Home, "sim", config.ShapeResident),
			state.FactsFile{Harness: "sim", Build: strconv.Itoa(v), Path: pad, Form: "first-char", Sigils: "/!"})
	}, read: func(s state.Seat) (int, error) {
		var f state.FactsFile
		err := state.ReadState(state.FactsPath(s.Home, "sim", config.ShapeResident), &f)
		if err == nil && f.Path != pad {
			return 0, errors.New("path torn")
		}
		return version(atoi(f.Build), err)
	}},
	{name: "statusline.json", write: func(s state.Seat, v int) error {
		b, _ := json.Marshal(map[string]any{"v": v, "pad": pad})
		return s.WriteRaw(s.StatusLinePath(), b)
	}, read: func(s state.Seat) (int, error) {
		var m struct {
			V   int    `json:"v"`
			Pad string `json:"pad"`
		}
		b, err := os.ReadFile(s.StatusLinePath())
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err == nil && m.Pad != pad {
			return 0, errors.New("pad torn")
		}
		return version(m.V, err)
	}},
	{name: "handoff/current + NNNN.md", write: func(s state.Seat, v int) error {
		_, err := s.Handoff().Materialize(handoff.Note{Seat: s.Name, Session: "s", Reason: strconv.Itoa(v), Procedure: pad, At: t0})
		return err
	}, read: func(s state.Seat) (int, error) {
		cur, err := s.Handoff().Current()
		if err != nil {
			return 0, err
		}
		if !strings.Contains(cur, strings.TrimSpace(pad)) {
			return 0, errors.New("current torn")
		}
		// The numbered file is written first: current never holds a note
		// that is not also in the history.
		numbered, err := os.ReadFile(filepath.Join(s.HandoffDir(), fmt.Sprintf("%04d.md", 2)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		if err == nil && string(numbered) != handoffText(s, 2) {
			return 0, errors.New("0002.md torn")
		}
		if cur == handoffText(s, 2) {
			if err != nil {
				return 0, errors.New("current is the new note but 0002.md is missing")
			}
			return 2, nil
		}
		if cur == handoffText(s, 1) {
			return 1, nil
		}
		return 0, errors.New("current is neither the old note nor the new")
	}},
	{name: "events/<ns>-<pid>-Stop.json", create: true, write: func(s state.Seat, v int) error {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "Stop", "session_id": "s", "prompt_id": strconv.Itoa(v), "last_assistant_message": pad})
		_, err := s.WriteEvent(hookwire.EvStop, b, time.Now())
		return err
	}, read: func(s state.Seat) (int, error) {
		// Every event file there is whole (a write after a kill adds its own).
		names, err := s.PendingEvents()
		if err != nil || len(names) == 0 {
			return 0, err
		}
		for _, n := range names {
			ev, err := hookwire.ReadEvent(filepath.Join(s.EventsDir(), n))
			if err != nil {
				return 0, err
			}
			if ev.Fields.LastAssistantMessage != pad || ev.Fields.PromptID != "2" {
				return 0, fmt.Errorf("event %s torn", n)
			}
		}
		return 2, nil
	}},
	{name: "inbox/msgs/<id>.json (no-replace link)", create: true, write: func(s state.Seat, v int) error {
		_, err := s.Enqueue(guard.Message{ID: "m2", From: "alice", Text: strconv.Itoa(v) + pad}, 0, time.Now())
		return err
	}, read: func(s state.Seat) (int, error) {
		m, err := s.ReadStored("m2")
		if err == nil && !strings.HasSuffix(m.Text, pad) {
			return 0, errors.New("text torn")
		}
		return absent(atoi(m.Text), err)
	}},
	{name: "control/<id>.toml", create: true, write: func(s state.Seat, v int) error {
		return s.RequestFile("c1").Write(state.Request{ID: "c1", Kind: state.CtlStop, Args: pad, FromPID: v, At: t0})
	}, read: func(s state.Seat) (int, error) {
		var r state.Request
		err := state.ReadState(filepath.Join(s.ControlDir(), "c1.toml"), &r)
		if err == nil && (r.Args != pad || r.Validate() != nil) {
			return 0, errors.New("request torn")
		}
		return absent(r.FromPID, err)
	}},
	{name: "handoff/notes/<ns>.md", create: true, write: func(s state.Seat, v int) error {
		_, err := s.Handoff().AddNote(strconv.Itoa(v)+pad, time.Now())
		return err
	}, read: func(s state.Seat) (int, error) {
		ents, err := os.ReadDir(filepath.Join(s.HandoffDir(), "notes"))
		if errors.Is(err, fs.ErrNotExist) || err == nil && len(ents) == 0 {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		b, err := os.ReadFile(filepath.Join(s.HandoffDir(), "notes", ents[0].Name()))
		if err == nil && string(b) != "2"+strings.TrimRight(pad, "\n")+"\n" {
			return 0, fmt.Errorf("note torn (%d bytes)", len(b))
		}
		return version(2, err)
	}},
}

// handoffText is what Materialize writes for version v (the render is
// deterministic for a fixed note).
func handoffText(s state.Seat, v int) string {
	return handoff.Note{Seat: s.Name, Session: "s", Reason: strconv.Itoa(v), Procedure: pad, At: t0}.Render()
}

func writerNamed(name string) (writer, bool) {
	for _, w := range writers {
		if w.name == name {
			return w, true
		}
	}
	return writer{}, false
}
