package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/proc"
)

// clkTck is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on
// every Linux architecture pantty runs on).
const clkTck = 100

// idle measures what a running seat with nothing to do costs: the driver's
// CPU time (utime + stime from /proc/PID/stat) over a window, its voluntary
// context switches (each is a wake-up: an event-driven loop wakes only for its
// heartbeat tick), and its resident memory (VmRSS). Every real seat of the run
// is measured at once: the delivery seat and, when the recover section ran,
// the ten seats it started. The simulator's own CPU is shown apart (it is the
// harness, not pantty).
func (b *bench) idle() error {
	seats := append([]*realSeat{}, b.r10...)
	if b.dlv != nil {
		seats = append([]*realSeat{b.dlv}, seats...)
	}
	if len(seats) == 0 {
		home, socket := b.home("idle")
		rs, err := b.newRealSeat(home, socket, "idle")
		if err != nil {
			return err
		}
		if err := b.start(rs); err != nil {
			return err
		}
		seats = []*realSeat{rs}
	}
	// Close the synthetic seats first: their heartbeat goroutine is this
	// process's only periodic work, and nothing else should run meanwhile.
	for _, set := range b.sets {
		set.Close()
	}
	b.sets = nil
	time.Sleep(2 * time.Second)
	window := time.Duration(b.pick(15, 60)) * time.Second
	type sample struct {
		driver, harness int
		d0, h0          int64
		cs0             int64
	}
	var ss []sample
	for _, rs := range seats {
		pid, err := rs.driverPID()
		if err != nil {
			return err
		}
		sess, err := rs.s.SessionFile().Read()
		if err != nil {
			return err
		}
		d0, err := cpuTicks(pid)
		if err != nil {
			return err
		}
		hpid, _ := proc.HarnessPID(sess.PanePID) // the pane pid is pantty's pane process, the harness its child
		h0, _ := cpuTicks(hpid)
		ss = append(ss, sample{driver: pid, harness: hpid, d0: d0, h0: h0, cs0: ctxSwitches(pid)})
	}
	b.logf("   idle window %s over %d drivers", window, len(ss))
	start := time.Now()
	time.Sleep(window)
	el := time.Since(start).Seconds()
	var worst, first, harnessMax, rssMax, rssFirst float64
	var wakes int64
	for i, s := range ss {
		d1, err := cpuTicks(s.driver)
		if err != nil {
			return fmt.Errorf("driver %d: %v", s.driver, err)
		}
		pct := float64(d1-s.d0) / clkTck / el * 100
		worst = max(worst, pct)
		h1, _ := cpuTicks(s.harness)
		harnessMax = max(harnessMax, float64(h1-s.h0)/clkTck/el*100)
		rss := vmRSS(s.driver)
		rssMax = max(rssMax, rss)
		if i == 0 {
			first, rssFirst = pct, rss
			wakes = ctxSwitches(s.driver) - s.cs0
		}
	}
	b.add(row{Section: "9 idle", What: fmt.Sprintf("driver CPU, idle seat, %.0f s (first seat)", el), Median: fmt.Sprintf("%.3f %% of a core", first),
		Target: "< 0.5 % of a core", Met: metText(first < 0.5)})
	b.add(row{Section: "9 idle", What: fmt.Sprintf("driver CPU, worst of %d idle drivers at once", len(ss)), N: len(ss), Median: fmt.Sprintf("%.3f %% of a core", worst),
		Target: "< 0.5 % of a core", Met: metText(worst < 0.5)})
	b.add(row{Section: "9 idle", What: fmt.Sprintf("driver wake-ups (voluntary context switches) over %.0f s", el), Median: fmt.Sprint(wakes)})
	b.add(row{Section: "9 idle", What: "driver VmRSS (first seat; max of all)", Median: fmt.Sprintf("%.1f MiB", rssFirst/1024), P99: fmt.Sprintf("max %.1f MiB", rssMax/1024)})
	b.add(row{Section: "9 idle", What: "(the harness: simulator CPU, worst, not pantty's)", Median: fmt.Sprintf("%.3f %% of a core", harnessMax)})
	return nil
}

// cpuTicks is utime + stime of pid in clock ticks.
func cpuTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	// After the comm field: f[0] is field 3 (state); utime is field 14, stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st, nil
}

// statusField reads a "Key:  value kB"-style field of /proc/PID/status.
func statusField(pid int, key string) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// vmRSS is VmRSS in KiB.
func vmRSS(pid int) float64 {
	v, _, _ := strings.Cut(statusField(pid, "VmRSS"), " ")
	n, _ := strconv.ParseFloat(v, 64)
	return n
}

// ctxSwitches sums the voluntary context switches of every thread of pid (a
// Go program's loop runs on whichever thread is free).
func ctxSwitches(pid int) int64 {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var sum int64
	for _, e := range ents {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, e.Name()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}
