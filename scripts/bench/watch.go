package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// watcher timestamps what appears in a seat's directories the moment it
// appears, as the driver would see it: hook event files arriving in events/
// (the evidence), and status files in inbox/status (the driver acting). Every
// latency of the delivery and turn-end sections is the difference of two such
// timestamps taken by this one process, so both ends share one clock and one
// observer.
type watcher struct {
	s  state.Seat
	fw *fsnotify.Watcher

	mu        sync.Mutex
	evSeen    map[string]time.Time // event file name -> first seen in events/
	stFirst   map[string]time.Time // message id -> its first status file (the driver began delivering it)
	stFinal   map[string]time.Time // message id -> first seen processed or failed
	parsed    map[string]hookwire.Event
	wake      chan struct{}
	done      chan struct{}
	watchStat bool
}

func newWatcher(s state.Seat, statuses bool) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := s.Ensure(); err != nil {
		return nil, err
	}
	w := &watcher{s: s, fw: fw, evSeen: map[string]time.Time{}, stFirst: map[string]time.Time{}, stFinal: map[string]time.Time{},
		parsed: map[string]hookwire.Event{}, wake: make(chan struct{}, 1), done: make(chan struct{}), watchStat: statuses}
	if err := fw.Add(s.EventsDir()); err != nil {
		return nil, err
	}
	if statuses {
		for _, d := range s.StatusDirs() {
			if err := fw.Add(d); err != nil {
				return nil, err
			}
		}
	}
	go w.loop()
	return w, nil
}

func (w *watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			t := time.Now()
			if !ev.Has(fsnotify.Create) {
				continue
			}
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			w.mu.Lock()
			switch {
			case dir == w.s.EventsDir() && strings.HasSuffix(name, ".json"):
				if _, ok := w.evSeen[name]; !ok {
					w.evSeen[name] = t
				}
			case slices.Contains(w.s.StatusDirs(), dir):
				if id, ok := strings.CutSuffix(name, ".toml"); ok {
					if _, ok := w.stFirst[id]; !ok {
						w.stFirst[id] = t
					}
					if _, ok := w.stFinal[id]; !ok {
						if st, err := w.s.ReadStatus(id); err == nil && inbox.Final(st.State) {
							w.stFinal[id] = t
						}
					}
				}
			}
			w.mu.Unlock()
			select {
			case w.wake <- struct{}{}:
			default:
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
		}
	}
}

func (w *watcher) close() {
	w.fw.Close()
	<-w.done
}

// until waits for cond, re-checking on every file event (and every 20 ms, for
// conditions no watched file marks); the timestamps are taken by the loop, not
// here, so how promptly this wakes does not change any figure.
func (w *watcher) until(what string, limit time.Duration, cond func() bool) error {
	deadline := time.After(limit)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-w.wake:
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("timed out after %s waiting for %s", limit, what)
		}
	}
	return nil
}

func (w *watcher) final(id string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.stFinal[id]
	return t, ok
}

func (w *watcher) firstStatus(id string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.stFirst[id]
	return t, ok
}

// count is how many events of kind have appeared in events/.
func (w *watcher) count(kind string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for name := range w.evSeen {
		if strings.HasSuffix(name, "-"+kind+".json") {
			n++
		}
	}
	return n
}

// event finds the first event of kind (in arrival order) that match accepts
// and returns it with the time it appeared in events/.
func (w *watcher) event(kind string, match func(hookwire.Event) bool) (hookwire.Event, time.Time, bool) {
	w.mu.Lock()
	var names []string
	for n := range w.evSeen {
		if strings.HasSuffix(n, "-"+kind+".json") {
			names = append(names, n)
		}
	}
	w.mu.Unlock()
	sort.Strings(names)
	for _, n := range names {
		w.mu.Lock()
		ev, ok := w.parsed[n]
		t := w.evSeen[n]
		w.mu.Unlock()
		if !ok {
			var err error
			ev, err = hookwire.ReadEvent(filepath.Join(w.s.EventsDir(), n))
			if err != nil {
				if ev, err = hookwire.ReadEvent(filepath.Join(w.s.SeenDir(), n)); err != nil {
					continue
				}
			}
			w.mu.Lock()
			w.parsed[n] = ev
			w.mu.Unlock()
		}
		if match(ev) {
			return ev, t, true
		}
	}
	return hookwire.Event{}, time.Time{}, false
}

// promptFor matches a UserPromptSubmit carrying message id in its guard header.
func promptFor(id string) func(hookwire.Event) bool {
	return func(ev hookwire.Event) bool {
		got, _, _, ok := guard.MatchHeader(ev.Fields.Prompt)
		return ok && got == id
	}
}

// stopFor matches the turn end of prompt promptID.
func stopFor(promptID string) func(hookwire.Event) bool {
	return func(ev hookwire.Event) bool { return promptID != "" && ev.Fields.PromptID == promptID }
}

// modelTurns counts, per message id, the model turns whose new input carried
// it in the simulator's request log: what really reached the model.
func modelTurns(s state.Seat) (map[string]int, error) {
	data, err := os.ReadFile(filepath.Join(s.HarnessDir(), "requests.jsonl"))
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" {
			continue
		}
		var r struct {
			Kind     string `json:"kind"`
			NewInput string `json:"new_input"`
			Error    string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("requests.jsonl: %v", err)
		}
		if r.Kind != "turn" || r.Error != "" {
			continue
		}
		if id, _, _, ok := guard.MatchHeader(r.NewInput); ok {
			n[id]++
		}
	}
	return n, nil
}
