package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// turnMarker makes each probe turn last long enough for a poller to see it
// running (model turns take seconds; the fast simulator's default is 20 ms).
const turnMarker = "[sim:slow=300ms]"

// turnEnd measures how fast the driver acts on a turn end: from the Stop
// hook's event file appearing in events/ to (a) the message's final status
// (the cursor's input) and (b) the next queued message's first status (the
// next submission started). The seat gets a burst of queued messages, so
// every turn end has a next message waiting. The baseline is pane polling for
// the idle prompt: on the baseline simulator, the technique's poll every
// 200 ms until two idle polls, timed from the same Stop evidence to the poll
// that decides "done".
func (b *bench) turnEnd() error {
	if b.dlv == nil {
		return fmt.Errorf("needs the delivery section's seat (run with -only delivery,turnend)")
	}
	rs := b.dlv
	w, err := newWatcher(rs.s, true)
	if err != nil {
		return err
	}
	defer w.close()
	k := b.pick(20, 100)
	var in strings.Builder
	var ids []string
	for i := 0; i < k; i++ {
		id := fmt.Sprintf("t%04d", i)
		ids = append(ids, id)
		line, _ := json.Marshal(map[string]string{"id": id, "from": "bench", "text": "turn-end probe " + id + " " + turnMarker})
		in.Write(append(line, '\n'))
	}
	r := b.runIn(b.env(rs.home, rs.socket), in.String(), "seat", "send", "dlv", "--jsonl")
	if r.Code != 0 {
		return fmt.Errorf("send burst: %s", r)
	}
	last := ids[len(ids)-1]
	if err := w.until("the burst final", time.Duration(k)*5*time.Second, func() bool { _, ok := w.final(last); return ok }); err != nil {
		return fmt.Errorf("%v\ndriver.log:\n%s", err, readFile(rs.s.DriverLogPath()))
	}
	var toFinal, toNext durs
	for i, id := range ids {
		st, err := rs.s.ReadStatus(id)
		if err != nil {
			return err
		}
		if st.State != inbox.StateProcessed {
			return fmt.Errorf("message %s ended %s (%s)", id, st.State, st.Detail)
		}
		_, tStop, ok := w.event(hookwire.EvStop, stopFor(st.PromptID))
		if !ok {
			return fmt.Errorf("no Stop event for %s (prompt %s)", id, st.PromptID)
		}
		tFinal, _ := w.final(id)
		toFinal = append(toFinal, tFinal.Sub(tStop))
		if i+1 < len(ids) {
			if tNext, ok := w.firstStatus(ids[i+1]); ok {
				toNext = append(toNext, tNext.Sub(tStop))
			}
		}
	}
	time.Sleep(settle)

	// The baseline: the same turns on the baseline simulator, its turn end
	// decided by polling the pane.
	base, err := b.startBaseSim("basete")
	if err != nil {
		return err
	}
	defer base.close()
	kb := b.pick(15, 60)
	var baseDecide, baseFirstIdle durs
	premature := 0
	for i := 0; i < kb; i++ {
		bid := fmt.Sprintf("bt%04d", i)
		sub, err := guard.Guard(guard.Message{ID: bid, Text: "turn-end probe " + bid + " " + turnMarker}, guard.DefaultDispatchFacts)
		if err != nil {
			return err
		}
		_, polls, err := base.deliver(sub.Text())
		if err != nil {
			return fmt.Errorf("baseline %s: %v", bid, err)
		}
		var promptID string
		if err := base.w.until("baseline evidence for "+bid, 10*time.Second, func() bool {
			ev, _, ok := base.w.event(hookwire.EvUserPromptSubmit, promptFor(bid))
			promptID = ev.Fields.PromptID
			return ok
		}); err != nil {
			return err
		}
		var tStop time.Time
		if err := base.w.until("baseline Stop for "+bid, 10*time.Second, func() bool {
			var ok bool
			_, tStop, ok = base.w.event(hookwire.EvStop, stopFor(promptID))
			return ok
		}); err != nil {
			return err
		}
		decided := polls[len(polls)-1].at
		if decided.Before(tStop) {
			premature++ // "done" before the turn ended: the technique's known failure
		} else {
			baseDecide = append(baseDecide, decided.Sub(tStop))
		}
		for _, p := range polls {
			if !p.busy && p.at.After(tStop) {
				baseFirstIdle = append(baseFirstIdle, p.at.Sub(tStop))
				break
			}
		}
		time.Sleep(settle)
	}
	b.timing("3 turn end", "Stop event → message final (cursor input), queue waiting", toFinal, 25*time.Millisecond, "median < 25 ms")
	b.versus(baseDecide, 0, "")
	b.timing("3 turn end", "Stop event → next submission started", toNext, 0, "")
	b.versus(baseDecide, 0, "")
	b.timing("3 turn end", "baseline: Stop → second idle poll (poll every 200 ms)", baseDecide, 0, "")
	b.timing("3 turn end", "baseline, optimistic: Stop → first idle poll", baseFirstIdle, 0, "")
	b.check("turn end: baseline never declared done before the turn ended", premature == 0,
		"%d of %d baseline turns (%s each) were declared done by polling before their Stop", premature, kb, strings.Trim(turnMarker, "[]"))
	return nil
}
