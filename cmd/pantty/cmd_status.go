package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/internal/termtext"
	"github.com/pantty/pantty/seat/telemetry"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// telemetryReader is how status and watch take readings; recover/ can set its
// own RecoverReader here (telemetry.Reader.Recover) once it reads its own files.
var telemetryReader = telemetry.Reader{}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show every seat's (or one seat's) readings, derived from recorded state only",
		Description: "Reads the state files and nothing else: no lock, no tmux, no model turn. A missing record\n" +
			"shows as unknown and an old one as stale, never as 0 or idle. With NAME the readings are\n" +
			"listed one per line with how each was bound to the seat. docs/telemetry.md lists every field.\n" +
			"HOST:NAME is a seat of a host of hosts.toml; --host and --all-hosts list hosts' seats (docs/fleet.md).",
		ArgsUsage: "[NAME]",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the JSON form (same as --format json)"},
			&cli.StringFlag{Name: "format", Usage: "table | json | prom (Prometheus text format)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "wide: every column (default: the most useful columns that fit the terminal, or $COLUMNS, or 120 off a terminal)"},
		}, fleetFlags()...),
		Action: statusAction,
	}
}

// fewerCollections lets one status run's heap grow to five times what is
// live before the garbage collector runs (GOGC=400), unless $GOGC says
// otherwise. Reading 100 seats allocates about 20 MB of short-lived decode
// buffers over a live heap of about 2 MB: at the default the collector ran
// nine times, 5-10 % of the run's CPU with its write barriers, and once at
// 400; the peak RSS goes from 19 to 32 MB (docs/performance-history.md).
func fewerCollections() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "print a line whenever a seat's readings change meaningfully, until interrupted",
		Description: "Follows the state directories with fsnotify. A line is printed for a change of health, phase,\n" +
			"context (in 5% steps of the window), inbox depth, cursor, model or session; a rewrite that\n" +
			"changed none of these prints nothing. The first line of each seat is its current state.",
		ArgsUsage: "[NAME]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per line"},
			&cli.DurationFlag{Name: "for", Usage: "stop after `DURATION` (default: run until interrupted)"},
		},
		Action: watchAction,
	}
}

func statusAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("status takes at most one seat NAME (got %d arguments)", c.NArg())
	}
	format := c.String("format")
	if c.Bool("json") {
		if format != "" && format != "json" {
			return usageErr("--json and --format %s disagree", format)
		}
		format = "json"
	}
	switch format {
	case "", "table", "json", "prom":
	default:
		return usageErr("--format %q: want table, json or prom", format)
	}
	if o := c.String("output"); o != "" && o != "wide" {
		return usageErr("-o %q: want wide", o)
	}
	if c.NArg() == 1 {
		remote, err := remoteSeat(c, c.Args().First(), func(name string) []string {
			args := []string{"status", name}
			if format != "" {
				args = append(args, "--format", format)
			}
			if o := c.String("output"); o != "" {
				args = append(args, "-o", o)
			}
			return args
		})
		if remote || err != nil {
			return err
		}
	} else if hosts, err := fleetHosts(c); err != nil || hosts != nil {
		if err != nil {
			return err
		}
		return fleetStatus(c, hosts, format)
	}
	if err := validSeatArg(c.Args().First()); err != nil {
		return err
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	fewerCollections()
	now := time.Now()
	var rows []telemetry.Row
	if c.NArg() == 1 {
		row, err := telemetryReader.ReadSeat(home, c.Args().First(), now)
		if err != nil {
			return err
		}
		rows = []telemetry.Row{row}
	} else if rows, err = telemetryReader.Read(home, now); err != nil {
		return err
	}
	out := os.Stdout
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(telemetry.Document{Version: telemetry.Version, At: now.UTC(), Home: home, Seats: rows, LastSweep: telemetry.ReadSweep(home, now)})
	case "prom":
		return telemetry.WritePrometheusWith(out, rows, telemetry.PromOptions{Home: home, Now: now})
	}
	col := colourOn(out)
	if c.NArg() == 1 && format == "" {
		writeDetail(out, rows[0], col)
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "no seats under %s\n", home)
		return nil
	}
	width := 0 // every column: -o wide
	if c.String("output") != "wide" {
		width = outputWidth(out)
	}
	writeTable(out, rows, col, width)
	return nil
}

func watchAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usageErr("watch takes at most one seat NAME (got %d arguments)", c.NArg())
	}
	if err := validSeatArg(c.Args().First()); err != nil {
		return err
	}
	home, err := stateRoot(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if d := c.Duration("for"); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	// The reader going away ends the watch, even while nothing changes.
	ctx = untilOutputClosed(ctx, os.Stdout)
	asJSON := c.Bool("json")
	var werr error
	err = telemetry.Watch(ctx, home, telemetry.WatchOptions{Seat: c.Args().First(), Reader: telemetryReader},
		func(ch telemetry.Change) {
			if werr != nil {
				return
			}
			if asJSON {
				b, err := json.Marshal(ch)
				if err != nil {
					werr = err
					return
				}
				_, werr = fmt.Fprintf(os.Stdout, "%s\n", b)
				return
			}
			_, werr = fmt.Fprintln(os.Stdout, telemetry.FormatChange(ch))
		})
	if err != nil {
		return err
	}
	if errors.Is(werr, syscall.EPIPE) {
		return nil // the reader went away between the poll and the write
	}
	return werr
}

// colourOn reports whether to colour output: a terminal, and NO_COLOR unset
// (https://no-color.org: any non-empty value turns colour off).
func colourOn(f *os.File) bool { return isTerminal(f) && os.Getenv("NO_COLOR") == "" }

func paint(s string, t telemetry.Tone, on bool) string {
	if !on {
		return s
	}
	code := ""
	switch t {
	case telemetry.Good:
		code = "32"
	case telemetry.Warn:
		code = "33"
	case telemetry.Dim:
		code = "2"
	case telemetry.Bad:
		code = "31"
	}
	if code == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// writeTable prints one aligned row per seat. Widths are counted in runes on
// the plain text and colour is added after padding, so escapes never skew them.
// With fit > 0 only the best-ranked columns whose total fits in fit runes are
// printed (SEAT always), in table order, by the cell rule of cells.go: a held
// queue's phase in its short form, a gave-up phase as long as the room left
// after the inbox allows, and one of the columns a glance needs (rank up to cutRank) that does
// not fit whole cut to the room left rather than dropped.
func writeTable(w io.Writer, rows []telemetry.Row, col bool, fit int) {
	now := time.Now()
	all := make([]map[string]telemetry.Cell, len(rows))
	for i, r := range rows {
		all[i] = r.Cells()
		if fit > 0 {
			all[i]["phase"] = fitPhase(r, all[i]["phase"], now)
		}
	}
	colWidth := func(key, head string) int {
		n := utf8.RuneCountInString(head)
		for _, m := range all {
			n = max(n, utf8.RuneCountInString(m[key].Text))
		}
		return n
	}
	seatWidth := utf8.RuneCountInString("SEAT")
	for _, r := range rows {
		seatWidth = max(seatWidth, utf8.RuneCountInString(r.Seat))
	}
	keep := map[string]bool{}
	used := seatWidth
	ranked := slices.Clone(telemetry.Columns)
	slices.SortFunc(ranked, func(a, b telemetry.Column) int { return a.Rank - b.Rank })
	widened := false
	for _, c := range ranked {
		if c.Rank > widenRank && !widened && keep["phase"] && fit > used {
			// A gave-up phase was fitted as its first clause: once the columns
			// a glance needs are in, the room left says why it gave up.
			widened = true
			old, room := colWidth("phase", "PHASE"), colWidth("phase", "PHASE")+fit-used
			for i, r := range rows {
				if wider := widerPhase(gaveUpPhase(r), room); wider != "" {
					all[i]["phase"] = telemetry.Cell{Text: wider, Tone: all[i]["phase"].Tone}
				}
			}
			used += colWidth("phase", "PHASE") - old
		}
		if n := colWidth(c.Key, c.Heading) + 2; fit <= 0 || used+n <= fit {
			keep[c.Key], used = true, used+n
		} else if room := fit - used - 2; c.Rank <= cutRank && room >= max(minCut, utf8.RuneCountInString(c.Heading)) {
			for _, m := range all {
				cell := m[c.Key]
				cell.Text = cut(cell.Text, room)
				m[c.Key] = cell
			}
			keep[c.Key], used = true, fit
		}
	}
	heads := []string{"SEAT"}
	for _, c := range telemetry.Columns {
		if keep[c.Key] {
			heads = append(heads, c.Heading)
		}
	}
	cells := make([][]telemetry.Cell, len(rows))
	width := make([]int, len(heads))
	for i, h := range heads {
		width[i] = utf8.RuneCountInString(h)
	}
	for i, r := range rows {
		line := []telemetry.Cell{{Text: r.Seat}}
		for _, c := range telemetry.Columns {
			if keep[c.Key] {
				line = append(line, all[i][c.Key])
			}
		}
		cells[i] = line
		for j, c := range line {
			width[j] = max(width[j], utf8.RuneCountInString(c.Text))
		}
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-utf8.RuneCountInString(s)) }
	var b strings.Builder
	for j, h := range heads {
		if j == len(heads)-1 {
			b.WriteString(h)
		} else {
			b.WriteString(pad(h, width[j]) + "  ")
		}
	}
	fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	for _, line := range cells {
		b.Reset()
		for j, c := range line {
			text := c.Text
			if j < len(line)-1 {
				text = pad(text, width[j])
			}
			b.WriteString(paint(text, c.Tone, col))
			if j < len(line)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// writeDetail prints one seat's readings one per line, each with how it was
// bound to the seat and why it is unknown or stale.
func writeDetail(w io.Writer, r telemetry.Row, col bool) {
	cells := r.Cells()
	metas := map[string]telemetry.Meta{}
	for _, x := range r.Readings() {
		metas[x.Name] = x.Meta
	}
	type line struct{ label, key, meta string }
	lines := []line{
		{"harness", "harness", "harness"}, {"shape", "shape", "shape"}, {"transport", "transport", "transport"}, {"intent", "intent", "intent"},
		{"health", "health", "health"}, {"phase", "phase", "heartbeat"}, {"heartbeat", "heartbeat", "heartbeat"},
		{"driver", "driver", "driver"}, {"session", "session", "session"}, {"model", "model", "model"},
		{"context", "context", "context"}, {"inbox", "inbox", "inbox"}, {"in flight", "in_flight", "in_flight"},
		{"cursor", "cursor", "cursor"}, {"last turn end", "last_turn_end", "last_turn_end"},
		{"ladder rung", "ladder", "ladder"}, {"provider waits", "provider_waits", "provider_waits"},
		{"compaction", "compaction", "compaction"}, {"seat done", "done", "done"}, {"last exit", "last_exit", "last_exit"},
		{"isolation", "isolation", "isolation"},
	}
	fmt.Fprintln(w, r.Seat)
	const lw = 16
	for _, l := range lines {
		c := cells[l.key]
		m := metas[l.meta]
		fmt.Fprintf(w, "  %-*s%s\n", lw, l.label, paint(c.Text, c.Tone, col))
		if l.label == "heartbeat" {
			continue // the phase line above printed the heartbeat's binding
		}
		if l.key == "provider_waits" {
			m.Why = waitsWhy(r, c, m.Why)
		}
		if m.Why != "" {
			fmt.Fprintf(w, "  %-*s%s\n", lw, "", paint("why: "+termtext.Line(m.Why), telemetry.Dim, col))
		}
		if m.Bound != "" {
			fmt.Fprintf(w, "  %-*s%s\n", lw, "", paint("bound: "+termtext.Line(m.Bound), telemetry.Dim, col))
		}
		if l.key == "provider_waits" {
			for _, x := range r.ProviderWaits.Waits {
				fmt.Fprintf(w, "  %-*s%s until %s: %s (%s)\n", lw, "", termtext.Line(x.Provider), x.Until.Format(time.RFC3339), termtext.Line(x.Reason), termtext.Line(x.Bound))
			}
		}
	}
}

// waitsWhy is the why under the provider waits line. When the seat's own
// driver holds the queue for an outage (the cell names the hold; no provider
// block is recorded), "providers.toml absent" under "held: transient outage"
// reads as if the hold were unexplained: it says what holds it instead.
func waitsWhy(r telemetry.Row, c telemetry.Cell, why string) string {
	if len(r.ProviderWaits.Waits) > 0 || !strings.HasPrefix(c.Text, "held: ") {
		return why
	}
	const absent = "providers.toml absent: no provider block has been recorded"
	held := "the seat's driver holds its queue for this outage (the phase above says why); no provider block holds it"
	if rest := strings.TrimPrefix(strings.TrimPrefix(why, absent), "; "); rest != "" {
		return held + "; " + rest
	}
	return held
}

// cutRank is the last rank of the columns a glance needs (health, intent,
// phase, done): one of them is cut to fit rather than dropped.
const cutRank = 4

// widenRank is the last rank placed before a gave-up phase takes the room
// left for its reason (the glance columns and the inbox); the columns ranked
// after it get what remains.
const widenRank = 5

// pipeWidth is the width status keeps to off a terminal (a pipe, a file, a
// mail from cron) when $COLUMNS does not say: every column is some 300
// characters, which wraps in any reader; -o wide asks for them all.
const pipeWidth = 120

// outputWidth is the width the table keeps to: the terminal's, else $COLUMNS,
// else pipeWidth.
func outputWidth(f *os.File) int {
	if isTerminal(f) {
		if w := terminalWidth(f); w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return pipeWidth
}

// terminalWidth is f's width in columns; 0 (every column) when it cannot be told.
func terminalWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 0
	}
	return w
}
