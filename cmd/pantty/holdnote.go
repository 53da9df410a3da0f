package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat/state"
)

// noteHolds prints one line on w each time what holds the seat's queue
// changes (seat.Hold) while `send --wait` blocks: a stopped seat, no driver,
// a provider or means wait, a dialog, a state root that cannot be written.
// The wait itself goes on and its exit codes stay; the script's log says why
// it is waiting. Changes arrive as fsnotify events on the seat's directory
// (heartbeat.toml and intent.toml are renamed into it); a heartbeat that
// stops coming sends no event, so staleness is looked at once per interval
// the heartbeat declares. stop ends the watch.
func noteHolds(s state.Seat, id string, w io.Writer) (stop func()) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	if err := fw.Add(s.Dir); err != nil {
		fw.Close()
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer fw.Close()
		last := ""
		look := func() {
			if h := s.Hold(time.Now()); h != last {
				last = h
				if h != "" {
					fmt.Fprintf(w, "pantty: %s waits: seat %s is held: %s\n", id, s.Name, h)
				}
			}
		}
		look()
		tick := time.NewTicker(holdLookEvery(s))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				switch filepath.Base(ev.Name) {
				case "heartbeat.toml", "intent.toml", "owner.toml":
					look()
				}
			case <-fw.Errors:
				look()
			case <-tick.C:
				look()
			}
		}
	}()
	return func() { close(done) }
}

// holdLookEvery is the heartbeat's declared interval (the seat's default
// when none is recorded): a stale heartbeat is news no event brings.
func holdLookEvery(s state.Seat) time.Duration {
	if hb, err := s.HeartbeatFile().Read(); err == nil && hb.Interval.Duration > 0 {
		return hb.Interval.Duration
	}
	return 30 * time.Second
}
