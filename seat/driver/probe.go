package driver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// startProbe proves capability, not presence: a prompt goes through the same
// board path, and the probe passes only when a model turn really ran for it and
// its reply carries the probe's token.
func (d *Driver) startProbe(r state.Request) {
	b := make([]byte, 6)
	rand.Read(b)
	id := "probe-" + hex.EncodeToString(b)
	text := "pantty liveness probe. Reply with the token " + id + " and nothing else; do not run tools."
	if err := seat.EnqueueInternal(d.S, id, text, d.now()); err != nil {
		d.answer(r, fmt.Errorf("probe: %v", err), "")
		return
	}
	if d.probes == nil {
		d.probes = map[string]state.Request{}
	}
	d.probes[id] = r
	d.addMessage(id)
}

func (d *Driver) answerProbe(r state.Request, e *inbox.Entry) {
	switch {
	case e.Status.State != inbox.StateProcessed:
		d.answer(r, fmt.Errorf("probe %s: no processed turn (%s %s)", e.Msg.ID, e.Status.State, e.Status.Reason), "")
	case !strings.Contains(e.Status.Reply, e.Msg.ID):
		d.answer(r, fmt.Errorf("probe %s: a turn ran but its reply did not carry the token", e.Msg.ID), "")
	default:
		d.answer(r, nil, fmt.Sprintf("probe %s: a model turn ran and its reply carried the token (turn end %s)", e.Msg.ID, e.Status.TurnEnd))
	}
}
