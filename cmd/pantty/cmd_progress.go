package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/pantty/pantty/seat/state"
)

// progress shows a person at a terminal what the seat's driver is doing while
// a command waits for its answer (`seat probe`, `seat compact`, a harness
// command): one stderr line per change of the heartbeat's phase, with the time
// waited so far. It follows heartbeat.toml on fsnotify events; off a terminal it
// prints nothing, so scripts see only the answer. The returned stop ends it.
func progress(s state.Seat) (stop func()) {
	if !isTerminal(os.Stderr) {
		return func() {}
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	if err := w.Add(s.Dir); err != nil {
		w.Close()
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := ""
		show := func() {
			hb, err := s.HeartbeatFile().Read()
			if err != nil {
				return
			}
			p := hb.Phase
			if hb.Waiting != "" {
				p += ": " + hb.Waiting
			}
			if p != last {
				last = p
				fmt.Fprintf(os.Stderr, "  %s … %s\n", p, time.Since(start).Round(100*time.Millisecond))
			}
		}
		show()
		for {
			select {
			case <-done:
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Base(ev.Name) == "heartbeat.toml" {
					show()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		w.Close()
	}
}
