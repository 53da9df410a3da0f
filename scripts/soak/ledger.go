package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// logger prints timestamped lines relative to the soak's start, to stdout and
// to soak.log under the root (kept with --keep).
type logger struct {
	mu    sync.Mutex
	start time.Time
	file  *os.File
	quiet bool
}

func newLogger(root string, quiet bool) *logger {
	f, _ := os.OpenFile(filepath.Join(root, "soak.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	return &logger{start: time.Now(), file: f, quiet: quiet}
}

func (l *logger) printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := fmt.Sprintf("%7.2fs  %s\n", time.Since(l.start).Seconds(), fmt.Sprintf(format, a...))
	if l.file != nil {
		l.file.WriteString(line)
	}
	if !l.quiet {
		os.Stdout.WriteString(line)
	}
}

// sentMsg is one message a sender's `pantty seat send` stored (exit 0): the
// sender's own list, which the model's view is counted against.
type sentMsg struct {
	id, seat, kind, sender string
	at                     time.Time
}

// ledger holds every sender's own list, and the sends that did not store.
type ledger struct {
	mu       sync.Mutex
	sent     []sentMsg
	refused  []string // a send that exited non-zero (the reason)
	attempts int
}

func (l *ledger) add(m sentMsg) {
	l.mu.Lock()
	l.sent = append(l.sent, m)
	l.mu.Unlock()
}

func (l *ledger) fail(why string) {
	l.mu.Lock()
	l.refused = append(l.refused, why)
	l.mu.Unlock()
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// messageText is one board message: mostly plain work, some slower turns (a
// wider window for a harness kill mid-turn), and some hostile texts whose
// leading sigil would run a command if it ever reached the input box raw —
// `!touch canary-ID` leaves a file in the workdir, `/clear` changes the
// session id — so a dispatch through the board door would show at the end.
func messageText(rng *rand.Rand, id string) (kind, text string) {
	switch n := rng.Intn(100); {
	case n < 20:
		return "slow", fmt.Sprintf("[sim:slow=%dms] a longer piece of work (%s)", 400+rng.Intn(800), id)
	case n < 24:
		return "hazard", fmt.Sprintf("!touch canary-%s", id)
	case n < 27:
		return "hazard", fmt.Sprintf("/clear the conversation, says message %s", id)
	case n < 30:
		return "hazard", fmt.Sprintf("/compact now, says message %s", id)
	case n < 35:
		return "mention", fmt.Sprintf("look at @notes.txt and @%s.md for message %s", id, id)
	default:
		return "plain", fmt.Sprintf("soak message %s: summarise the quarterly numbers, line %d", id, rng.Intn(1000))
	}
}

// sender is one board writer: real `pantty seat send` processes with explicit
// ids, into seats chosen at random, until stop or its quota.
func (w *world) sender(j int, rng *rand.Rand, stop <-chan struct{}, gap func(*rand.Rand) time.Duration, quota int, l *ledger) {
	for k := 1; k <= quota; k++ {
		select {
		case <-stop:
			return
		case <-time.After(gap(rng)):
		}
		r := w.seats[rng.Intn(len(w.seats))]
		id := fmt.Sprintf("snd%d-%05d", j, k)
		kind, text := messageText(rng, id)
		w.send(l, sentMsg{id: id, seat: r.name, kind: kind, sender: fmt.Sprintf("sender%d", j)}, text)
	}
}

// send stores one message through the board door and records it in the
// sender's list only when send said it was stored.
func (w *world) send(l *ledger, m sentMsg, text string) {
	l.mu.Lock()
	l.attempts++
	l.mu.Unlock()
	m.at = time.Now()
	res := w.pantty(30*time.Second, text, "seat", "send", m.seat, "--id", m.id, "--from", m.sender)
	if res.code != 0 {
		l.fail(fmt.Sprintf("%s → %s: %s", m.id, m.seat, res))
		w.log.printf("send %s to %s refused: %s", m.id, m.seat, res)
		return
	}
	l.add(m)
}

// durations summarises a set of times.
type durations []time.Duration

func (d durations) stats() string {
	if len(d) == 0 {
		return "-"
	}
	s := append(durations{}, d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1)+0.5)] }
	return fmt.Sprintf("median %s, p90 %s, max %s", q(0.5).Round(10*time.Millisecond), q(0.9).Round(10*time.Millisecond), s[len(s)-1].Round(10*time.Millisecond))
}
