package main

// Readings a newcomer meets in the first hour: durations for --since, a
// handoff that does not exist yet.

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// TestEventsSinceTakesADuration: --since 30m is the events of the last 30
// minutes, as journalctl and kubectl read it; a negative one is bad input.
func TestEventsSinceTakesADuration(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "since")
	h.Send("old", "sent an hour ago")
	h.Send("new", "sent now")
	// Age the first message's record by an hour (the events are derived from it).
	s := h.Seat()
	m, err := s.ReadStored("old")
	if err != nil {
		t.Fatal(err)
	}
	m.EnqueuedAt = m.EnqueuedAt.Add(-time.Hour)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(s.MsgPath("old"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.Run("events", "--since", "30m", "--settle", "0")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"id":"new"`) || strings.Contains(r.Stdout, `"id":"old"`) {
		t.Fatalf("events --since 30m: want the new message only, exit 0; got %s", r)
	}
	if r := h.Run("events", "--since", "2h", "--settle", "0"); r.Code != 0 || !strings.Contains(r.Stdout, `"id":"old"`) {
		t.Fatalf("events --since 2h: want the old message too; got %s", r)
	}
	if r := h.Run("events", "--since", "-5m"); r.Code != exitBadInput || !strings.Contains(r.Stderr, "negative") {
		t.Fatalf("events --since -5m: want exit 2; got %s", r)
	}
}

// TestHandoffShowBeforeAnyHandoff: one line saying there is none yet, not the
// file system's words.
func TestHandoffShowBeforeAnyHandoff(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "nohandoff")
	r := h.Run("handoff", "show", h.Name)
	if r.Code != exitNotFound || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "has no handoff yet") ||
		strings.Contains(r.Stderr, "no such file") || strings.Contains(r.Stderr, "open ") {
		t.Fatalf("handoff show before any handoff: want exit %d and one line in the user's words; got %s", exitNotFound, r)
	}
}

// column returns the text under heading in a padded table (status, seat
// list): from where the heading starts to where the next one does.
func column(t *testing.T, table, heading, seatName string) string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	head := lines[0]
	at := strings.Index(head, heading)
	if at < 0 {
		t.Fatalf("no %s column in\n%s", heading, table)
	}
	end := len(head) + 1000
	if rest := strings.TrimLeft(head[at+len(heading):], " "); rest != "" {
		end = strings.Index(head[at:], rest) + at
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, seatName+" ") {
			return strings.TrimSpace(l[at:min(end, len(l))])
		}
	}
	t.Fatalf("no row for %s in\n%s", seatName, table)
	return ""
}

// TestListAndStatusSayTheSamePhase: seat list and status read the phase the
// same way — a seat whose driver died is "no driver (last: …)", not its last
// beat's phase; a stopped one "stopped", not the "stopping" its last beat says.
func TestListAndStatusSayTheSamePhase(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "phases")
	h.Start()
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver gone", time.Minute, func() bool { return !h.Owner().Live() })
	both := func(want string) {
		t.Helper()
		list, status := h.Run("seat", "list"), h.Run("status", "-o", "wide")
		lp, sp := column(t, list.Stdout, "PHASE", h.Name), column(t, status.Stdout, "PHASE", h.Name)
		if lp != sp || !strings.HasPrefix(lp, want) {
			t.Fatalf("phase: seat list says %q, status says %q; want both %q…\n%s\n%s", lp, sp, want, list.Stdout, status.Stdout)
		}
	}
	both("no driver (last: ")
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	both("stopped")
}

// TestHealthBeforeTheFirstSweepAndAfterARevival: before recover has judged a
// seat its HEALTH is read from the live records (a live driver, or none), not
// "unknown" for every seat; right after a sweep revived it and verified the
// revival it reads "revived", not "dead" until the next sweep.
func TestHealthBeforeTheFirstSweepAndAfterARevival(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "healthy")
	h.Start()
	health := func() string {
		t.Helper()
		r := h.Run("status", "-o", "wide")
		return column(t, r.Stdout, "HEALTH", h.Name)
	}
	if got := health(); got != "live (no recover verdict yet)" {
		t.Fatalf("HEALTH of a running seat before any sweep: %q", got)
	}
	o := h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver gone", time.Minute, func() bool { return !h.Owner().Live() })
	if got := health(); got != "no driver (no recover verdict yet)" {
		t.Fatalf("HEALTH of a seat whose driver died, before any sweep: %q", got)
	}
	if r := h.Run("recover"); r.Code != 0 {
		t.Fatalf("recover: %s\ndriver.log:\n%s", r, h.DriverLog())
	}
	if got := health(); got != "revived" {
		b, _ := os.ReadFile(h.Seat().Dir + "/health.toml")
		t.Fatalf("HEALTH right after a verified revival: %q\nhealth.toml:\n%s", got, b)
	}
	// The driver killed again right after that sweep: what is true now, not
	// the sweep's word, until the next sweep (newcomer pass, 2026-12-06: "ok"
	// beside PHASE "no driver" for two intervals).
	o = h.Owner()
	if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the driver gone", time.Minute, func() bool { return !h.Owner().Live() })
	if got := health(); got != "no driver (since the last sweep: revived)" {
		t.Fatalf("HEALTH of a seat whose driver died after a sweep found it well: %q", got)
	}
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatalf("seat stop: %s", r)
	}
	if got := health(); got != "stopped" {
		t.Fatalf("HEALTH of a seat stopped after a sweep: %q, want stopped", got)
	}
}

// TestAttachWithNothingToAttachToLeavesNoRelay: a turn-spawned seat has no
// pane (its harness is the driver's child for each message). seat attach says
// so in one line before entering relay, so the queue is not held: the next
// message is processed.
func TestAttachWithNothingToAttachToLeavesNoRelay(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "turnattach")
	path := h.Seat().ConfigPath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `shape = "resident"`, `shape = "turn"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Start()
	h.Send("t1", "a first turn")
	h.WaitFinal(time.Minute, "t1")
	r := h.Run("seat", "attach", h.Name)
	if r.Code != exitFailed || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "turn-spawned") || !strings.Contains(r.Stderr, "nothing to attach to") {
		t.Fatalf("seat attach of a turn-spawned seat: want exit 1 and one line; got %s", r)
	}
	h.Send("t2", "after the attach")
	h.WaitFinal(time.Minute, "t2")
	if st := h.Status("t2"); st.State != inbox.StateProcessed {
		t.Fatalf("the message after a failed attach: %+v", st)
	}
}

// TestAttachWithoutATerminalSaysSoAndLeavesNoRelay: seat attach and
// watch-pane from a script (stdin and stdout not a terminal) say so in one
// line, exit 2, and enter no relay: the next message is processed.
func TestAttachWithoutATerminalSaysSoAndLeavesNoRelay(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "ttyattach")
	h.Start()
	for _, verb := range []string{"attach", "watch-pane"} {
		r := h.Run("seat", verb, h.Name)
		if r.Code != exitBadInput || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "needs a terminal") || !strings.Contains(r.Stderr, "pantty seat inbox "+h.Name) {
			t.Fatalf("seat %s without a terminal: want exit 2 and one line naming what works; got %s", verb, r)
		}
	}
	if m, err := h.Seat().ModeFile().Read(); err == nil && m.Mode != "direct" {
		t.Fatalf("seat attach without a terminal entered %s: %+v", m.Mode, m)
	}
	h.Send("a1", "after the refused attach")
	h.WaitFinal(time.Minute, "a1")
	if st := h.Status("a1"); st.State != inbox.StateProcessed {
		t.Fatalf("the message after a refused attach: %+v", st)
	}
}

// TestCommandHeldByAnOutageSaysSo: while the driver holds the queue for a
// provider outage (a 5xx, probed again with backoff), status's WAITS names the
// hold and its next probe (not "none"), and a command that times out waiting
// names the outage and its next probe, not "not at a turn boundary".
func TestCommandHeldByAnOutageSaysSo(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "heldcmd", seattest.TOML(`[recovery]`, `backoff = "5m"`, `backoff_max = "5m"`, `transient_attempts = 5`))
	h.Start()
	h.Send("m1", "[sim:5xx] the provider fails this request")
	h.WaitFor("the queue held for the outage", time.Minute, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Phase == "waiting-retry"
	})
	if waits := column(t, h.Run("status", "-o", "wide").Stdout, "WAITS", h.Name); !strings.HasPrefix(waits, "held: transient outage, next probe ") {
		t.Fatalf("status WAITS while the queue is held for an outage: %q, want the hold and its next probe", waits)
	}
	r := h.Run("seat", "command", h.Name, "--wait", "1s", "--", "/context")
	if r.Code != exitFailed || !strings.Contains(r.Stderr, "outage") || !strings.Contains(r.Stderr, "500 Internal server error") ||
		!strings.Contains(r.Stderr, "next probe") || strings.Contains(r.Stderr, "turn boundary") {
		t.Fatalf("seat command during an outage: want exit 1 naming the outage and its next probe; got %s", r)
	}
}

// TestStartWarnsAboutOpenModes: a seat directory or seat.toml other users can
// read (made by hand: mkdir and cp with a 022 umask) is said at start, with
// the chmod that closes it; the start goes on.
func TestStartWarnsAboutOpenModes(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "openmodes")
	s := h.Seat()
	os.Chmod(s.Dir, 0o755)
	os.Chmod(s.ConfigPath(), 0o644)
	r := h.Start()
	for _, want := range []string{"chmod 700 " + s.Dir, "chmod 600 " + s.ConfigPath()} {
		if !strings.Contains(r.Stderr, want) {
			t.Fatalf("start of a seat with open modes: stderr lacks %q: %s", want, r)
		}
	}
}
