package seat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookrun"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// The in-process halves of scripts/bench.sh's intake figures: what the code
// costs without the process around it (fork, exec, Go runtime start-up).
//
//	go test -run '^$' -bench 'Guard|Enqueue|RunHook' -benchmem ./seat/

// benchSeat makes a seat directory with a seat.toml and no driver.
func benchSeat(b *testing.B) state.Seat {
	b.Helper()
	dir := b.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		b.Fatal(err)
	}
	s, err := state.Open(filepath.Join(dir, "home"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := seat.InitConfig(s, "sim", work, nil); err != nil {
		b.Fatal(err)
	}
	return s
}

const typicalText = "please look at the failing build on main (ci run 4821) and report back with @logs/ci.txt"

// BenchmarkGuardTypical is the guard on a typical board message (the existing
// Guard4KiB/Guard256KiB benchmarks cover large ones).
func BenchmarkGuardTypical(b *testing.B) {
	m := guard.Message{ID: "20260810T120000-0a1b2c3d", From: "alice", Board: "main", Channel: "ops", Text: typicalText}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := guard.Guard(m, guard.DefaultDispatchFacts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueue is Seat.Enqueue, the body of `pantty seat send`: validate,
// guard, temp file, fsync, no-replace link, directory fsync.
func BenchmarkEnqueue(b *testing.B) {
	s := benchSeat(b)
	now := time.Now()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		m := guard.Message{ID: fmt.Sprintf("m%09d", i), From: "alice", Text: typicalText}
		if r, err := s.Enqueue(m, 0, now); err != nil || r.Duplicate {
			b.Fatalf("enqueue: %+v %v", r, err)
		}
	}
}

// BenchmarkEnqueueParallel is Enqueue from concurrent senders into one inbox
// (GOMAXPROCS goroutines; the fsyncs overlap).
func BenchmarkEnqueueParallel(b *testing.B) {
	s := benchSeat(b)
	now := time.Now()
	var n atomic.Int64
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := guard.Message{ID: fmt.Sprintf("p%09d", n.Add(1)), From: "alice", Text: typicalText}
			if r, err := s.Enqueue(m, 0, now); err != nil || r.Duplicate {
				b.Errorf("enqueue: %+v %v", r, err)
				return
			}
		}
	})
}

// BenchmarkEnqueueDuplicate is a send of an id already stored: it must cost
// no write at all.
func BenchmarkEnqueueDuplicate(b *testing.B) {
	s := benchSeat(b)
	m := guard.Message{ID: "dup", From: "alice", Text: typicalText}
	if _, err := s.Enqueue(m, 0, time.Now()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r, err := s.Enqueue(m, 0, time.Now()); err != nil || !r.Duplicate {
			b.Fatalf("enqueue: %+v %v", r, err)
		}
	}
}

// hookPayload is a harness payload of the given event.
func hookPayload(kind string, extra map[string]any) []byte {
	p := map[string]any{"hook_event_name": kind, "session_id": "0f7c4a52-9d7e-4c8e-9a55-2d1b6f0e9c11",
		"transcript_path": "/tmp/none.jsonl", "cwd": "/tmp", "permission_mode": "default"}
	for k, v := range extra {
		p[k] = v
	}
	data, _ := json.Marshal(p)
	return data
}

// BenchmarkRunHook is `pantty hook` in process: what the harness waits on
// apart from the process start. Consumed events are cleared every 1,000
// calls, as the driver would move them away.
func BenchmarkRunHook(b *testing.B) {
	sub, err := guard.Guard(guard.Message{ID: "m1", From: "alice", Text: strings.Repeat(typicalText+" ", 5)}, guard.DefaultDispatchFacts)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name       string
		payload    func(i int) []byte
		statusLine bool
	}{
		{"UserPromptSubmit", func(int) []byte {
			return hookPayload(hookwire.EvUserPromptSubmit, map[string]any{"prompt_id": "p1", "prompt": sub.Text()})
		}, false},
		{"Stop", func(int) []byte {
			return hookPayload(hookwire.EvStop, map[string]any{"prompt_id": "p1", "last_assistant_message": "done"})
		}, false},
		{"StatusLineChanged", func(i int) []byte {
			return hookPayload("Status", map[string]any{"model": map[string]any{"id": "sim-1"},
				"context_window": map[string]any{"context_window_size": 200000,
					"current_usage": map[string]any{"input_tokens": i, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 12000}}})
		}, true},
		{"StatusLineUnchanged", func(int) []byte {
			return hookPayload("Status", map[string]any{"model": map[string]any{"id": "sim-1"},
				"context_window": map[string]any{"context_window_size": 200000,
					"current_usage": map[string]any{"input_tokens": 1, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 12000}}})
		}, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := benchSeat(b)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				i++
				var out, errb bytes.Buffer
				if code := hookrun.Run(s.Home, s.Name, c.statusLine, "", bytes.NewReader(c.payload(i)), &out, &errb); code != 0 || errb.Len() > 0 {
					b.Fatalf("hook: exit %d: %s", code, errb.String())
				}
				if i%1000 == 0 {
					b.StopTimer()
					clearEvents(b, s)
					b.StartTimer()
				}
			}
		})
	}
}

func clearEvents(b *testing.B, s state.Seat) {
	names, err := s.PendingEvents()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range names {
		os.Remove(filepath.Join(s.EventsDir(), n))
	}
}
