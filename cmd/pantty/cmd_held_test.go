package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/seat/seattest"
)

// TestAHeldQueueShowsInATableThatFits: while the driver holds the queue for a
// transient outage, the default status table (80 and 120 columns off a
// terminal) and seat list (80 columns) name the hold and its next probe, and
// no line is wider than the width.
func TestAHeldQueueShowsInATableThatFits(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "held", seattest.TOML(`[recovery]`, `backoff = "5m"`, `backoff_max = "5m"`, `transient_attempts = 5`))
	h.Start()
	h.Send("m1", "[sim:5xx] the provider fails this request")
	h.WaitFor("the queue held for the outage", time.Minute, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && hb.Phase == "waiting-retry" && strings.Contains(hb.Waiting, "next probe")
	})
	// seat show names what holds the message until its next probe.
	if r := h.Run("seat", "show", h.Name, "m1"); r.Code != 0 || !strings.Contains(r.Stdout, "(next probe of a transient error)") || strings.Contains(r.Stdout, "provider wait") {
		t.Errorf("seat show of a message held for a transient outage: want its not-before named by the transient error; got %s", r)
	}
	// status NAME's provider waits line names the hold, and the why under it
	// says what holds the queue, not that providers.toml is absent.
	r := h.Run("status", h.Name)
	if !regexp.MustCompile(`(?m)^  provider waits  held: transient outage, next probe \S+\n {18}why: the seat's driver holds its queue for this outage \(the phase above says why\); no provider block holds it\n`).MatchString(r.Stdout) ||
		strings.Contains(r.Stdout, "providers.toml absent") {
		t.Errorf("status NAME of a held queue: want the hold and what holds it under provider waits; got %s", r)
	}
	for _, c := range []struct {
		width int
		args  []string
	}{{80, []string{"status"}}, {120, []string{"status"}}, {80, []string{"seat", "list"}}} {
		env := map[string]string{}
		if c.width != 120 {
			env["COLUMNS"] = "80"
		}
		r := h.RunEnv(env, "", c.args...)
		t.Logf("%v at %d columns:\n%s", c.args, c.width, r.Stdout)
		if r.Code != 0 {
			t.Fatal(r)
		}
		for _, l := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > c.width {
				t.Errorf("%v: a line of %d characters, want at most %d:\n%s", c.args, n, c.width, r.Stdout)
			}
		}
		row := ""
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.HasPrefix(l, h.Name+" ") {
				row = l
			}
		}
		if !regexp.MustCompile(`held: transient, probe \d\d:\d\d:\d\d`).MatchString(row) {
			t.Errorf("%v at %d columns: the row does not name the hold (transient) and its next probe:\n%s", c.args, c.width, r.Stdout)
		}
	}
}
