package main

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/telemetry"
)

// The cell rule of a table that keeps to a width (status, seat list): a held
// queue's phase is some 230 characters (the harness's error text, the failure
// count, two dates), so it never fits and a whole-column rule drops it, and
// the hold with it. What a glance needs is what holds the queue and when it is
// next tried; the rest is in `status NAME`, `-o wide` and --json.

// heldPhase is the short form of a held queue's phase: "held: transient,
// probe 15:25:03" (a transient outage, a means fault) or "held: provider,
// until 15:25:03" (a provider wait). ok is false when nothing holds the queue.
func heldPhase(r telemetry.Row, now time.Time) (text string, ok bool) {
	hb := r.Heartbeat
	if !hb.IsKnown() || hb.Phase == nil {
		return "", false
	}
	if hb.Fault != nil {
		t := "held: " + string(*hb.Fault)
		if hb.Waiting != nil {
			if at, ok := probeTime(*hb.Waiting); ok {
				t += ", probe " + clock(at, now)
			}
		}
		return t, true
	}
	if *hb.Phase == "waiting-provider" && len(r.ProviderWaits.Waits) > 0 {
		first := r.ProviderWaits.Waits[0]
		for _, x := range r.ProviderWaits.Waits[1:] {
			if x.Until.Before(first.Until) {
				first = x
			}
		}
		return "held: provider, until " + clock(first.Until, now), true
	}
	return "", false
}

// fitPhase is the phase cell with a held queue's phase in its short form (a
// prefix the reading adds, "stale: " or "no driver (last: ", stays), and a
// driver that gave up relaunching said as "gave up" (gaveUpPhase).
func fitPhase(r telemetry.Row, c telemetry.Cell, now time.Time) telemetry.Cell {
	if clauses := gaveUpPhase(r); clauses != nil {
		c.Text = clauses[0]
		return c
	}
	short, ok := heldPhase(r, now)
	if !ok {
		return c
	}
	if long := termtext.Line(r.Heartbeat.PhaseText()); strings.Contains(c.Text, long) {
		c.Text = strings.Replace(c.Text, long, short, 1)
	}
	return c
}

// gaveUpPrefix and gaveUpRe read the waiting text of a driver that gave up
// relaunching (seat/driver giveUp): "gave up: the harness exited 3 times in a
// row before it came up (last: …); its last words: …".
const gaveUpPrefix = "gave up: "

var gaveUpRe = regexp.MustCompile(`exited (\d+) times in a row before it came up`)

// lastWords labels the harness's words in a gave-up phase.
const lastWords = "; last words: "

// gaveUpPhase is the phase of a seat whose driver gave up relaunching, in
// clauses a table adds while they fit (widerPhase): "gave up", then ": 3
// failed starts", then "; last words: " and the harness's last words. The
// whole text led with "relaunching (gave up: the harness exited …" and, some
// 200 characters, took a fitted table's room from every column after it. nil
// when the driver did not give up.
func gaveUpPhase(r telemetry.Row) []string {
	hb := r.Heartbeat
	if !hb.IsKnown() || hb.Waiting == nil || !strings.HasPrefix(*hb.Waiting, gaveUpPrefix) {
		return nil
	}
	clauses := []string{"gave up"}
	if m := gaveUpRe.FindStringSubmatch(*hb.Waiting); m != nil {
		clauses = append(clauses, ": "+m[1]+" failed starts")
	}
	if _, words, ok := strings.Cut(*hb.Waiting, "; its last words: "); ok && words != "" {
		clauses = append(clauses, lastWords+termtext.Line(words))
	}
	return clauses
}

// widerPhase is the gave-up phase in room runes: as many of its clauses as
// fit whole, and the harness's words cut when at least minCut runes of them
// fit; "" when no more than the first fits.
func widerPhase(clauses []string, room int) string {
	if len(clauses) < 2 {
		return ""
	}
	text := clauses[0]
	for i, c := range clauses[1:] {
		n := utf8.RuneCountInString(text)
		switch {
		case n+utf8.RuneCountInString(c) <= room:
			text += c
			continue
		case i == len(clauses)-2 && strings.HasPrefix(c, lastWords) && room-n-utf8.RuneCountInString(lastWords) >= minCut:
			text = cut(text+c, room)
		}
		break
	}
	if text == clauses[0] {
		return ""
	}
	return text
}

// probeTime is the time after "next probe " in a waiting phase's text.
func probeTime(waiting string) (time.Time, bool) {
	i := strings.LastIndex(waiting, "next probe ")
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.FieldsFunc(waiting[i+len("next probe "):], func(r rune) bool { return r == ' ' || r == ')' || r == ';' || r == ',' })
	if len(f) == 0 {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, f[0])
	return at, err == nil
}

// clock is t in local time: the time of day when it is within a day of now,
// else with its date.
func clock(t, now time.Time) string {
	t = t.Local()
	if d := t.Sub(now); d > -24*time.Hour && d < 24*time.Hour {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 2 15:04")
}

// minCut is the narrowest a cut column is kept: narrower, it says nothing.
const minCut = 12

// cut shortens s to n runes, its end replaced by "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
