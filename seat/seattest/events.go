package seattest

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/pantty/pantty/seat/hookwire"
)

// Events returns the hook events of kind the seat received, handled or not.
// The driver moves an event from events/ to seen/ once handled, so events/ is
// read first and seen/ second: a file that moves between the two reads is
// found in seen/ (the other order missed it, a CI failure of
// TestSendWaitReturnsClaudesReply). A name is returned once.
func (h *Harness) Events(kind string) []hookwire.Event {
	s := h.Seat()
	var out []hookwire.Event
	found := map[string]bool{}
	for _, dir := range []string{s.EventsDir(), s.SeenDir()} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), "-"+kind+".json") || found[e.Name()] {
				continue
			}
			if ev, err := hookwire.ReadEvent(filepath.Join(dir, e.Name())); err == nil {
				found[e.Name()] = true
				out = append(out, ev)
			}
		}
	}
	return out
}
