package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func seatList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErr("seat list takes no arguments")
	}
	if hosts, err := fleetHosts(c); err != nil || hosts != nil {
		if err != nil {
			return err
		}
		return fleetSeatList(c, hosts)
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	names, err := state.List(home)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return seatListJSON(home, names)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	table := [][]string{{"SEAT", "HARNESS", "INTENT", "OWNER", "PHASE", "QUEUED", "SESSION"}}
	gaveUp := [][]string{nil} // per row, a gave-up phase's clauses (cells.go)
	now := time.Now()
	for _, n := range names {
		s, _ := state.Open(home, n)
		row := []string{n, "unknown", "unknown", "none", "unknown", "unknown", "unknown"}
		var clauses []string
		if cfg, err := s.LoadConfig(); err == nil {
			row[1] = cfg.Harness
		} else {
			row[1] = "bad seat.toml"
		}
		if o, live, err := s.LiveOwner(); err != nil {
			row[3] = "unreadable"
		} else if live {
			row[3] = o.Holder
		}
		// Intent and phase are status's readings, word for word (one
		// vocabulary: a stopped seat is "stopped", not the last beat's
		// "stopping"; a seat only made is "never started" in INTENT).
		if r, err := telemetryReader.ReadSeat(home, n, now); err == nil {
			cells := r.Cells()
			row[2], row[4] = cells["intent"].Text, fitPhase(r, cells["phase"], now).Text
			clauses = gaveUpPhase(r)
		}
		if v, err := s.View(); err == nil {
			q := 0
			for _, e := range v.Open {
				if !inbox.Final(e.Status.State) {
					q++
				}
			}
			row[5] = fmt.Sprint(q)
		}
		if sess, err := s.SessionFile().Read(); err == nil {
			row[6] = sess.ID
		}
		for i := range row {
			row[i] = termtext.Line(row[i])
		}
		table = append(table, row)
		gaveUp = append(gaveUp, clauses)
	}
	for _, row := range fitList(table, gaveUp, outputWidth(os.Stdout)) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// fitList keeps seat list's table to fit runes by the cell rule of cells.go
// (the held and gave-up phases are already short): the session id is cut to
// its first 8 characters, then left out (`status NAME` and --json print it
// whole), then the phase is cut to the room left, never narrower than minCut.
// Room left over widens a gave-up phase (gaveUp, per row) with its reason,
// which a person needs more than the whole session id: with one, the id is
// cut to 8 characters first.
func fitList(table, gaveUp [][]string, fit int) [][]string {
	const phase, session = 4, 6
	if slices.ContainsFunc(gaveUp, func(c []string) bool { return len(c) > 1 }) {
		for _, row := range table[1:] {
			row[session] = cut(row[session], 8)
		}
	}
	table = fitColumns(table, fit)
	w, total := 0, 0
	for j := range table[0] {
		cw := 0
		for _, row := range table {
			cw = max(cw, utf8.RuneCountInString(row[j]))
		}
		if j == phase {
			w = cw
		}
		total += cw + 2
	}
	if room := w + fit - (total - 2); room > w {
		for i, row := range table[1:] {
			if wider := widerPhase(gaveUp[i+1], room); wider != "" {
				row[phase] = wider
			}
		}
	}
	return table
}

// fitColumns is fitList's rule for the columns themselves.
func fitColumns(table [][]string, fit int) [][]string {
	const phase, session = 4, 6
	total := func() int {
		n := 0
		for j := range table[0] {
			w := 0
			for _, row := range table {
				w = max(w, utf8.RuneCountInString(row[j]))
			}
			n += w + 2
		}
		return n - 2
	}
	if total() <= fit {
		return table
	}
	for _, row := range table[1:] {
		row[session] = cut(row[session], 8)
	}
	if total() > fit {
		for i, row := range table {
			table[i] = row[:session]
		}
	}
	if over := total() - fit; over > 0 {
		w := 0
		for _, row := range table {
			w = max(w, utf8.RuneCountInString(row[phase]))
		}
		for _, row := range table[1:] {
			row[phase] = cut(row[phase], max(minCut, w-over))
		}
	}
	return table
}
