// Command bench measures pantty's performance paths and prints one table of
// medians, p99s and ratios against baselines run in the same process
// (docs/performance.md explains every figure). It is run by scripts/bench.sh,
// which builds the pantty binary first:
//
//	go run ./scripts/bench -pantty /path/to/pantty [-long] [-only enqueue,delivery,...]
//
// Everything it creates lives under one private directory (/tmp/pb-<pid>):
// state roots, tmux sockets, workdirs. It starts real seats (drivers and the
// simulator in real tmux) and synthetic ones (this process holds their owner
// locks and writes their heartbeats; see ./synth), and at the end stops the
// seats it started, the fleet section's ControlMasters and sshd, and kills
// the tmux servers it created, by their sockets.
// Speed is reported, never asserted: the table says met / not met against the
// targets, and the exit code is 0 unless a measurement could not be taken or
// a correctness check (no loss, no duplicate, every seat ok) failed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/harness/all"
)

// sections in the order they run; idle runs last so nothing else is running.
var sections = []string{"enqueue", "hook", "delivery", "turnend", "recover", "status", "fleet", "claude", "idle"}

// init registers the harnesses: the seats this program makes in-process
// (newRealSeat, synth) name one, and seat.toml's validation knows only the
// registered names.
func init() { all.Register() }

func main() {
	pantty := flag.String("pantty", "", "the pantty binary to measure (required)")
	long := flag.Bool("long", false, "the long form: more samples, 500 synthetic seats, a 60 s idle run")
	only := flag.String("only", "", "comma-separated sections to run ("+strings.Join(sections, ",")+"); default all")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	keep := flag.Bool("keep", false, "keep the work directory (state roots, logs) for inspection")
	compare := flag.String("compare", "", "another pantty binary (e.g. built before a fix): seat send, the enqueue replay, hook, recover and status also run it, interleaved, as 'before'")
	hello := flag.String("hello", "", "a Go hello-world binary: the hook section runs it interleaved, as the floor of a process start")
	flag.Parse()
	if *pantty == "" {
		fmt.Fprintln(os.Stderr, "bench: -pantty is required (scripts/bench.sh builds it)")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*pantty)
	if err != nil {
		fatal(err)
	}
	want := map[string]bool{}
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			want[strings.TrimSpace(s)] = true
		}
	}
	b, err := newBench(abs, *long)
	if err != nil {
		fatal(err)
	}
	if *compare != "" {
		if b.compare, err = filepath.Abs(*compare); err != nil {
			fatal(err)
		}
	}
	if *hello != "" {
		if b.hello, err = filepath.Abs(*hello); err != nil {
			fatal(err)
		}
	}
	// An interrupt still stops what was started.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "bench: interrupted, cleaning up")
		b.cleanup(false)
		os.Exit(130)
	}()
	failed := false
	for _, s := range sections {
		if len(want) > 0 && !want[s] {
			continue
		}
		b.logf("== %s", s)
		start := time.Now()
		if err := b.runSection(s); err != nil {
			failed = true
			b.logf("section %s FAILED: %v", s, err)
			b.fail(s, err)
		}
		b.logf("   (%s took %s)", s, time.Since(start).Round(100*time.Millisecond))
	}
	b.cleanup(*keep)
	b.printTable(os.Stdout)
	if *jsonOut != "" {
		data, _ := json.MarshalIndent(b.report(), "", "  ")
		if err := os.WriteFile(*jsonOut, append(data, '\n'), 0o644); err != nil {
			fatal(err)
		}
	}
	if failed || b.checksFailed() {
		os.Exit(1)
	}
}

func (b *bench) runSection(s string) error {
	switch s {
	case "enqueue":
		return b.enqueue()
	case "hook":
		return b.hookCost()
	case "delivery":
		return b.delivery()
	case "turnend":
		return b.turnEnd()
	case "recover":
		return b.recoverSweep()
	case "status":
		return b.status()
	case "fleet":
		return b.fleet()
	case "claude":
		return b.claude()
	case "idle":
		return b.idle()
	}
	return fmt.Errorf("unknown section %q", s)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
