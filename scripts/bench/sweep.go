package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/scripts/bench/synth"
)

// recoverSweep measures one `pantty recover` sweep (the whole process, as
// cron runs it) over 1 and 10 real simulated seats and over 100 (and, in the
// long form, 500) synthetic healthy seats: wall time per sweep, and the tmux
// invocations of one sweep counted by a wrapper named `tmux` first in PATH.
// Every case is first checked with --dry-run to be all ok: a sweep over dead
// seats would act, which is not what is measured.
func (b *bench) recoverSweep() error {
	wrap := filepath.Join(b.root, "wrap")
	if err := os.MkdirAll(wrap, 0o700); err != nil {
		return err
	}
	// The log's path is written into the wrapper: pantty runs tmux clients
	// with a minimal environment (PATH HOME USER …), so a variable naming it
	// would not reach the wrapper (every sweep counted 0 calls that way).
	calls := filepath.Join(wrap, "calls.log")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexec %s \"$@\"\n", calls, b.realTmux)
	if err := os.WriteFile(filepath.Join(wrap, "tmux"), []byte(script), 0o755); err != nil {
		return err
	}
	if b.dlv == nil {
		home, socket := b.home("rec1")
		rs, err := b.newRealSeat(home, socket, "one")
		if err != nil {
			return err
		}
		if err := b.start(rs); err != nil {
			return err
		}
		b.dlv = rs
	}
	if err := b.sweepCase(wrap, "1 real seat", b.dlv.home, 1, 0, ""); err != nil {
		return err
	}
	if err := b.startR10(); err != nil {
		return err
	}
	if err := b.sweepCase(wrap, "10 real seats", b.r10[0].home, 10, 0, ""); err != nil {
		return err
	}
	counts := []int{100}
	if b.long {
		counts = append(counts, 500)
	}
	for _, n := range counts {
		home, err := b.synthHome(n, 5)
		if err != nil {
			return err
		}
		target := time.Duration(0)
		text := ""
		if n == 100 {
			target, text = 300*time.Millisecond, "< 300 ms and ≤ 3 tmux"
		}
		if err := b.sweepCase(wrap, fmt.Sprintf("%d synthetic seats", n), home, n, target, text); err != nil {
			return err
		}
	}
	if b.long {
		m100, m500 := b.sweepMed[100], b.sweepMed[500]
		b.add(row{Section: "5 recover", What: "growth per seat, 100 → 500 synthetic seats", Median: fmtD((m500 - m100) / 400)})
	}
	home, err := b.historyHome()
	if err != nil {
		return err
	}
	return b.sweepCase(wrap, "1 synthetic seat with 1,000 processed messages", home, 1, 0, "")
}

// startR10 starts ten real simulated seats on one tmux socket.
func (b *bench) startR10() error {
	if b.r10 != nil {
		return nil
	}
	home, socket := b.home("r10")
	for i := 0; i < 10; i++ {
		rs, err := b.newRealSeat(home, socket, fmt.Sprintf("r%d", i))
		if err != nil {
			return err
		}
		if err := b.start(rs); err != nil {
			return err
		}
		b.r10 = append(b.r10, rs)
	}
	return nil
}

// synthHome builds (once) a state root of n synthetic healthy seats.
func (b *bench) synthHome(n, history int) (string, error) {
	if h, ok := b.synths[n]; ok {
		return h, nil
	}
	home, socket := b.home(fmt.Sprintf("syn%d", n))
	t := time.Now()
	set, err := synth.Build(synth.Options{Home: home, Work: b.work, N: n, Socket: socket, Pantty: b.pantty, History: history})
	if err != nil {
		return "", err
	}
	set.BeatEvery(10 * time.Second)
	b.sets = append(b.sets, set)
	b.synths[n] = home
	b.logf("   built %d synthetic seats in %s", n, time.Since(t).Round(time.Millisecond))
	return home, nil
}

// historyHome is one synthetic seat with 1,000 processed messages: a busy
// seat's inbox within the 30-day retention.
func (b *bench) historyHome() (string, error) {
	const key = -1000
	if h, ok := b.synths[key]; ok {
		return h, nil
	}
	home, socket := b.home("hist")
	set, err := synth.Build(synth.Options{Home: home, Work: b.work, N: 1, Prefix: "busy", Socket: socket, Pantty: b.pantty, History: 1000})
	if err != nil {
		return "", err
	}
	set.BeatEvery(10 * time.Second)
	b.sets = append(b.sets, set)
	b.synths[key] = home
	return home, nil
}

func (b *bench) sweepCase(wrap, label, home string, n int, target time.Duration, targetText string) error {
	env := b.env(home, "")
	r := b.runIn(env, "", "recover", "--dry-run", "--json")
	var rep recover.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		return fmt.Errorf("%s: recover --dry-run --json: %v: %s", label, err, r)
	}
	for _, s := range rep.Seats {
		if s.Verdict != recover.OK {
			return fmt.Errorf("%s: seat %s is %s before the sweep is measured: %s", label, s.Seat, s.Verdict, s.Reason)
		}
	}
	if len(rep.Seats) != n {
		return fmt.Errorf("%s: the report lists %d seats, want %d", label, len(rep.Seats), n)
	}
	runs := b.pick(10, 20)
	if n >= 500 {
		runs = 10
	}
	var walls, cpu, before, beforeCPU durs
	for i := 0; i < runs; i++ {
		r := b.runIn(env, "", "recover", "--json")
		if r.Code != 0 {
			return fmt.Errorf("%s: recover: %s", label, r)
		}
		walls, cpu = append(walls, r.Wall), append(cpu, r.CPU)
		if b.compare != "" {
			r := b.runBin(b.compare, env, "", "recover", "--json")
			if r.Code != 0 {
				return fmt.Errorf("%s: recover (-compare binary): %s", label, r)
			}
			before, beforeCPU = append(before, r.Wall), append(beforeCPU, r.CPU)
		}
	}
	log := filepath.Join(wrap, "calls.log") // the wrapper's (recoverSweep)
	if err := os.Remove(log); err != nil && !os.IsNotExist(err) {
		return err
	}
	counted := b.runIn(b.env(home, "", "PATH="+wrap+":"+os.Getenv("PATH")), "", "recover", "--json")
	if counted.Code != 0 {
		return fmt.Errorf("%s: counted recover: %s", label, counted)
	}
	calls, listAll := 0, 0
	if data, err := os.ReadFile(log); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l == "" {
				continue
			}
			calls++
			if strings.Contains(l, "list-panes -a") {
				listAll++
			}
		}
	}
	what := fmt.Sprintf("recover sweep, %s (tmux invocations: %d, list-panes -a: %d)", label, calls, listAll)
	b.timing("5 recover", what, walls, 0, "")
	b.withCPU(cpu)
	if targetText != "" {
		b.rows[len(b.rows)-1].Target = targetText
		b.rows[len(b.rows)-1].Met = metText(walls.median() < target && calls <= 3)
	}
	if b.compare != "" {
		b.timing("5 recover", "  the same with the -compare binary (before)", before, 0, "")
		b.withCPU(beforeCPU)
	}
	if b.sweepMed == nil {
		b.sweepMed = map[int]time.Duration{}
	}
	if strings.Contains(label, "synthetic seats") {
		b.sweepMed[n] = walls.median()
	}
	b.check("recover: one list-panes -a per socket, "+label, listAll == 1 && calls == listAll,
		"%d tmux invocations in one sweep, %d of them list-panes -a (one socket)", calls, listAll)
	return nil
}
