package main

// `pantty events --host|--all-hosts`: the hosts' event streams merged into
// one. Each host's stream is its own `pantty events` over ssh, resumed from
// its own cursor; every merged line carries the combined cursor (every
// host's last cursor, internal/fleet.Cursor), so `--since` that cursor
// resumes each host exactly where its last printed line left it. A host that
// drops out is a `host` line with the reason, and a follow tries it again from
// its cursor: nothing missed, nothing repeated, nothing hidden.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/seat/feed"
	"github.com/urfave/cli/v2"
)

// hostRetryMax caps the pause before a follow asks a dropped host again.
const hostRetryMax = 30 * time.Second

// hostLine is one line of one host's stream, or (line nil) the host's state.
type hostLine struct {
	host   int
	line   []byte
	cursor string // the host's cursor after this line ("" for a health line)
	state  string // a host line: ok or unknown
	why    string
	done   bool // the host's stream ended (without --follow)
}

// startCursors turns --since into each host's starting point. A combined
// cursor gives each host its own; a relative point (now, a duration) is made
// absolute here, once, so every host starts from the same instant and the
// first combined cursor already names every host.
func startCursors(hosts []fleet.Host, since string, now time.Time) (map[string]string, error) {
	start := map[string]string{}
	if since == "" {
		return start, nil
	}
	if fleet.IsCombined(since) {
		c, err := fleet.ParseCursor(since)
		if err != nil {
			return nil, usageErr("--since: %v", err)
		}
		return c, nil
	}
	if _, err := feed.ParseSince(since, now); err != nil {
		return nil, err
	}
	abs := since
	if since == "now" {
		abs = strconv.FormatInt(now.UnixNano(), 10) + "/~" // after every key at now: keys start [a-z0-9]
	} else if d, err := time.ParseDuration(since); err == nil {
		abs = now.Add(-d).UTC().Format(time.RFC3339Nano)
	}
	for _, h := range hosts {
		start[h.Name] = abs
	}
	return start, nil
}

func fleetEvents(c *cli.Context, hosts []fleet.Host, seatName string) error {
	start, err := startCursors(hosts, c.String("since"), time.Now())
	if err != nil {
		return err
	}
	follow := c.Bool("follow")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = untilOutputClosed(ctx, os.Stdout)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan hostLine, 256)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			streamHost(ctx, c, i, h, seatName, start[h.Name], follow, ch)
		}()
	}
	go func() { wg.Wait(); close(ch) }()

	combined := fleet.Cursor{}
	for h, cur := range start {
		combined[h] = cur
	}
	down := map[int]bool{}
	var unknown []string
	var held [][]hostLine // without --follow: each host's lines, merged by time at the end
	if !follow {
		held = make([][]hostLine, len(hosts))
	}
	emit := func(l hostLine) error {
		out := mergedLine(hosts[l.host], l, combined)
		_, err := os.Stdout.Write(append(out, '\n'))
		return err
	}
	for l := range ch {
		h := hosts[l.host]
		switch {
		case l.done:
			continue
		case l.line == nil && l.state == "unknown" && down[l.host]:
			continue // said once; the follow keeps asking it
		case l.line == nil && l.state == "unknown":
			down[l.host] = true
			unknown = append(unknown, h.Name)
		case l.line == nil && l.state == "ok" && !down[l.host]:
			continue // a host that never dropped needs no "back" line
		case l.line == nil:
			down[l.host] = false
		}
		if !follow && l.line != nil {
			held[l.host] = append(held[l.host], l)
			continue
		}
		if err := emit(l); err != nil {
			cancel()
			if errors.Is(err, syscall.EPIPE) {
				return nil
			}
			return err
		}
	}
	if !follow {
		for _, l := range mergeByTime(held) {
			if err := emit(l); err != nil {
				if errors.Is(err, syscall.EPIPE) {
					return nil
				}
				return err
			}
		}
	}
	if len(unknown) > 0 && !follow {
		sort.Strings(unknown)
		return codedError{exitUnknown, fmt.Sprintf("host %v could not be read: its events are unknown (a host line says why); resume with --since the last cursor", unknown)}
	}
	return nil
}

// mergedLine is one host's event line with the host named, the seat named
// as a person types it (HOST:SEAT), and the combined cursor in place of the
// host's own; a host line says the host's state.
func mergedLine(h fleet.Host, l hostLine, combined fleet.Cursor) []byte {
	if l.line == nil {
		b, _ := json.Marshal(struct {
			V     int       `json:"v"`
			At    time.Time `json:"at"`
			Type  string    `json:"type"`
			Host  string    `json:"host"`
			State string    `json:"state"`
			Why   string    `json:"why,omitempty"`
		}{jsonVersion, time.Now().UTC(), "host", h.Name, l.state, l.why})
		return b
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(l.line, &m) != nil {
		return l.line
	}
	m["host"], _ = json.Marshal(h.Name)
	var name string
	if json.Unmarshal(m["seat"], &name) == nil && name != "" {
		m["seat"], _ = json.Marshal(fleetName(h, name))
	}
	if l.cursor != "" {
		combined[h.Name] = l.cursor
		m["cursor"], _ = json.Marshal(combined.String())
	}
	b, _ := json.Marshal(m)
	return b
}

// mergeByTime merges the hosts' lines by their time, keeping each host's own
// order (its cursor depends on it).
func mergeByTime(held [][]hostLine) []hostLine {
	var out []hostLine
	at := func(l hostLine) time.Time {
		var e struct {
			At time.Time `json:"at"`
		}
		json.Unmarshal(l.line, &e)
		return e.At
	}
	next := make([]int, len(held))
	for {
		best := -1
		var bestAt time.Time
		for i, ls := range held {
			if next[i] < len(ls) {
				if t := at(ls[next[i]]); best < 0 || t.Before(bestAt) {
					best, bestAt = i, t
				}
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, held[best][next[best]])
		next[best]++
	}
}

// streamHost runs one host's `pantty events` and sends its lines; with
// --follow a stream that ends is started again from the host's last cursor,
// after a pause that grows to hostRetryMax, and the host's state is said.
func streamHost(ctx context.Context, c *cli.Context, i int, h fleet.Host, seatName, cursor string, follow bool, ch chan<- hostLine) {
	pause := time.Second
	for {
		args := []string{"events", "--settle", c.Duration("settle").String()}
		if seatName != "" {
			args = append(args, "--seat", seatName)
		}
		if follow {
			args = append(args, "--follow")
		}
		if cursor != "" {
			args = append(args, "--since", cursor)
		}
		w := &lineWriter{each: func(line []byte) {
			var e struct {
				Cursor string `json:"cursor"`
			}
			json.Unmarshal(line, &e)
			if e.Cursor != "" {
				cursor = e.Cursor
			}
			select {
			case ch <- hostLine{host: i, line: line, cursor: e.Cursor}:
			case <-ctx.Done():
			}
		}}
		answered := func() {
			if follow {
				ch <- hostLine{host: i, state: "ok"} // it said its version: (back) up
			}
		}
		bound := time.Duration(0)
		if !follow {
			bound = c.Duration("host-timeout")
		}
		r := h.Run(ctx, fleet.Call{Args: args, Stdout: w, Bound: bound, Answered: answered})
		if ctx.Err() != nil {
			return
		}
		switch {
		case r.Unknown():
			ch <- hostLine{host: i, state: "unknown", why: r.Reason}
		case r.Code != 0:
			ch <- hostLine{host: i, state: "unknown", why: fmt.Sprintf("host %s: pantty events exited %d: %s", h.Name, r.Code, lastLineOf(r.Stderr))}
		}
		if !follow {
			ch <- hostLine{host: i, done: true}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, hostRetryMax)
	}
}

// lineWriter calls each for every whole line written to it.
type lineWriter struct {
	buf  []byte
	each func([]byte)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append([]byte(nil), w.buf[:i]...)
		w.buf = w.buf[i+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			w.each(line)
		}
	}
}
