package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// settle is the quiet left after a turn before the next measurement, so each
// message meets an idle seat (the status-line hook the harness runs after the
// turn end, and the driver's context reading, are over).
const settle = 250 * time.Millisecond

// delivery measures, on an idle seat (the simulator in real tmux, a real
// driver), the time from `pantty seat send` returning to the harness's
// UserPromptSubmit evidence of that message appearing in events/. The
// baseline, interleaved message by message in the same run, is the common
// tmux technique on an identical simulator: from its start (send-keys -l) to
// the same evidence. Also recorded here: the turn end on an idle seat (Stop
// event to the message's final status), and exactly-once delivery counted
// from the simulator's request log.
func (b *bench) delivery() error {
	home, socket := b.home("dlv")
	rs, err := b.newRealSeat(home, socket, "dlv")
	if err != nil {
		return err
	}
	w, err := newWatcher(rs.s, true)
	if err != nil {
		return err
	}
	defer w.close()
	if err := b.start(rs); err != nil {
		return err
	}
	b.dlv = rs
	base, err := b.startBaseSim("base")
	if err != nil {
		return err
	}
	defer base.close()
	env := b.env(home, socket)
	k := b.pick(20, 100)
	var pantty, baseline, baseDone, idleEnd, pickup, pasteToEv durs
	var ids []string
	body := "please look at the failing build on main and report back (delivery probe)"
	for i := 0; i < k; i++ {
		id := fmt.Sprintf("d%04d", i)
		ids = append(ids, id)
		r := b.runIn(env, body+" "+id, "seat", "send", "dlv", "--id", id)
		sent := time.Now()
		if r.Code != 0 {
			return fmt.Errorf("send %s: %s", id, r)
		}
		if err := w.until("message "+id+" final", 30*time.Second, func() bool { _, ok := w.final(id); return ok }); err != nil {
			return fmt.Errorf("%v\ndriver.log:\n%s", err, readFile(rs.s.DriverLogPath()))
		}
		_, tUPS, ok := w.event(hookwire.EvUserPromptSubmit, promptFor(id))
		if !ok {
			return fmt.Errorf("no UserPromptSubmit evidence for %s", id)
		}
		pantty = append(pantty, tUPS.Sub(sent))
		if t, ok := w.firstStatus(id); ok {
			pickup = append(pickup, t.Sub(sent))
			pasteToEv = append(pasteToEv, tUPS.Sub(t))
		}
		st, err := rs.s.ReadStatus(id)
		if err != nil {
			return err
		}
		if st.State != inbox.StateProcessed {
			return fmt.Errorf("message %s ended %s (%s %s)", id, st.State, st.Reason, st.Detail)
		}
		if _, tStop, ok := w.event(hookwire.EvStop, stopFor(st.PromptID)); ok {
			tFinal, _ := w.final(id)
			idleEnd = append(idleEnd, tFinal.Sub(tStop))
		}
		time.Sleep(settle)

		// The baseline, same text through the same guard (so its evidence is
		// matched the same way), on its own simulator.
		bid := fmt.Sprintf("b%04d", i)
		sub, err := guard.Guard(guard.Message{ID: bid, Text: body + " " + bid}, guard.DefaultDispatchFacts)
		if err != nil {
			return err
		}
		start, polls, err := base.deliver(sub.Text())
		if err != nil {
			return fmt.Errorf("baseline %s: %v", bid, err)
		}
		if err := base.w.until("baseline evidence for "+bid, 10*time.Second, func() bool {
			_, _, ok := base.w.event(hookwire.EvUserPromptSubmit, promptFor(bid))
			return ok
		}); err != nil {
			return err
		}
		_, tB, _ := base.w.event(hookwire.EvUserPromptSubmit, promptFor(bid))
		baseline = append(baseline, tB.Sub(start))
		baseDone = append(baseDone, polls[len(polls)-1].at.Sub(start))
		time.Sleep(settle)
	}
	b.timing("2 delivery", "seat send returned → UserPromptSubmit evidence (idle seat)", pantty, 0, "")
	b.versus(baseline, 3, "≥ 3× faster than baseline")
	b.timing("2 delivery", "  driver starts the submission (status written), from send returned (< 0: before the sender exited)", pickup, 0, "")
	b.timing("2 delivery", "  submission started → evidence (3 tmux calls, paste_settle, harness commit, hook)", pasteToEv, 0, "")
	var spawn durs
	for i := 0; i < 30; i++ {
		t := time.Now()
		cmd := exec.Command(b.realTmux, "-u", "-f", "/dev/null", "-S", socket, "display-message", "-p", "#{pane_id}")
		cmd.Env = b.env(home, socket)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tmux display-message: %v: %s", err, out)
		}
		spawn = append(spawn, time.Since(t))
	}
	b.timing("2 delivery", "  one tmux client invocation (display-message; a delivery makes 3)", spawn, 0, "")
	b.timing("2 delivery", "baseline: send-keys -l, 500 ms, Enter → UserPromptSubmit evidence", baseline, 0, "")
	b.timing("2 delivery", "baseline: … → its own 'done' (two idle polls at 200 ms)", baseDone, 0, "")
	b.timing("3 turn end", "Stop event → message final (idle seat, one message at a time)", idleEnd, 0, "")

	// Exactly once, counted from what reached the model.
	turns, err := modelTurns(rs.s)
	if err != nil {
		return err
	}
	bad := 0
	for _, id := range ids {
		if turns[id] != 1 {
			bad++
		}
	}
	b.check("delivery: exactly once at the model", bad == 0, "%d messages sent; %d reached the model other than exactly once (simulator request log)", len(ids), bad)
	return nil
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
