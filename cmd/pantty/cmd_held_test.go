package main

import (
	"fmt"
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

// TestAGaveUpSeatFitsItsTables: after a start that failed (the harness exits
// at start-up until the driver gives up) the phase is short, "gave up", so
// an 80-column status keeps its inbox and done columns, and with room it
// gives the count and the harness's words; seat list the same.
func TestAGaveUpSeatFitsItsTables(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "gaveup", seattest.Env(map[string]string{"PANTTY_SIM_FAIL_START": "1"}))
	if r := h.Run("seat", "start", h.Name); r.Code != exitFailed {
		t.Fatalf("seat start of a harness that fails at start-up: want exit 1, got %s", r)
	}
	const words = "gave up: 3 failed starts; last words: sim: PANTTY_SIM_FAIL_START=1"
	for _, c := range []struct {
		width     int
		args      []string
		phase     string // the row's phase, as a regexp
		wantHeads []string
	}{
		{80, []string{"status"}, `  gave up  `, []string{"INBOX", "DONE"}},
		{160, []string{"status"}, regexp.QuoteMeta(words), []string{"INBOX", "DONE"}},
		{80, []string{"seat", "list"}, `  gave up: 3 failed starts  `, []string{"QUEUED", "SESSION"}},
		{120, []string{"seat", "list"}, regexp.QuoteMeta(words), []string{"QUEUED", "SESSION"}},
	} {
		r := h.RunEnv(map[string]string{"COLUMNS": fmt.Sprint(c.width)}, "", c.args...)
		lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
		if r.Code != 0 || len(lines) != 2 || strings.Contains(r.Stdout, "relaunching") || !regexp.MustCompile(c.phase).MatchString(lines[1]) {
			t.Errorf("%v at %d columns: want the row's phase to match %q and no 'relaunching'; got %s", c.args, c.width, c.phase, r)
			continue
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > c.width {
				t.Errorf("%v: a line of %d characters, want at most %d:\n%s", c.args, n, c.width, r.Stdout)
			}
		}
		for _, head := range c.wantHeads {
			if !strings.Contains(lines[0], head) {
				t.Errorf("%v at %d columns: no %s column:\n%s", c.args, c.width, head, r.Stdout)
			}
		}
	}
}
