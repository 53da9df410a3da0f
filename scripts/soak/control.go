package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
)

// fKillControl SIGKILLs the driver's tmux control-mode client (the one its
// pane commands and change events go through), mid-delivery when a message
// is in flight: the driver reconnects once, then falls back to one tmux
// process per command; no key may be lost or doubled (the ledger's check).
const fKillControl = "kill-control"

// killControl is the kill-control fault.
func (w *world) killControl(rec *faultRec, r *seatRig) {
	s := w.seat(r)
	o, live, _ := s.LiveOwner()
	if !live {
		rec.note = "no live driver to hit"
		return
	}
	// Mid-delivery when the seat has a message in flight within a few
	// seconds: the client carries its paste and Enter.
	when := "between messages"
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if hb, err := s.HeartbeatFile().Read(); err == nil && (hb.Phase == state.PhaseSubmitting || hb.Phase == state.PhaseInTurn) {
			when = "in phase " + hb.Phase
			break
		}
	}
	for _, pid := range proc.ChildrenOf(o.PID) {
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		// The Conn's client; the session watch is the read-only one.
		if err != nil || !strings.Contains(string(cmd), "\x00-C\x00") || !strings.Contains(string(cmd), "ignore-size,no-output\x00") {
			continue
		}
		start, err := procid.Start(pid)
		if err != nil {
			continue
		}
		rec.at = time.Now()
		rec.done = signalIdentified(pid, start, syscall.SIGKILL)
		rec.note = fmt.Sprintf("SIGKILL tmux control client pid %d of driver %d %s", pid, o.PID, when)
		return
	}
	rec.note = "no control client (the driver fell back to plain tmux clients already, or has none yet)"
}
