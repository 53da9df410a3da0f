package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pantty/pantty/seat/telemetry"
)

// status measures `pantty status --json` as a whole process over 1 real seat
// (with the delivery section's history), 10 real seats, 100 and (long form)
// 500 synthetic seats, and one seat with a long history.
func (b *bench) status() error {
	type c struct {
		label  string
		home   string
		n      int
		target time.Duration
	}
	var cases []c
	if b.dlv != nil {
		cases = append(cases, c{"1 real seat (after the delivery runs)", b.dlv.home, 1, 0})
	}
	if b.r10 != nil {
		cases = append(cases, c{"10 real seats", b.r10[0].home, 10, 0})
	}
	h, err := b.synthHome(100, 5)
	if err != nil {
		return err
	}
	cases = append(cases, c{"100 synthetic seats", h, 100, 100 * time.Millisecond})
	if b.long {
		h, err := b.synthHome(500, 5)
		if err != nil {
			return err
		}
		cases = append(cases, c{"500 synthetic seats", h, 500, 0})
	}
	if h, err := b.historyHome(); err == nil {
		cases = append(cases, c{"1 synthetic seat with 1,000 processed messages", h, 1, 0})
	}
	for _, k := range cases {
		runs := b.pick(10, 20)
		var walls, cpu, before, beforeCPU durs
		for i := 0; i < runs; i++ {
			bins := []string{b.pantty}
			if b.compare != "" {
				bins = append(bins, b.compare)
			}
			for j, bin := range bins {
				r := b.runBin(bin, b.env(k.home, ""), "", "status", "--json")
				if r.Code != 0 {
					return fmt.Errorf("status %s (%s): %s", k.label, bin, r)
				}
				var doc telemetry.Document
				if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
					return fmt.Errorf("status %s: not JSON: %v", k.label, err)
				}
				if len(doc.Seats) != k.n {
					return fmt.Errorf("status %s: %d seats, want %d", k.label, len(doc.Seats), k.n)
				}
				if j == 0 {
					walls, cpu = append(walls, r.Wall), append(cpu, r.CPU)
				} else {
					before, beforeCPU = append(before, r.Wall), append(beforeCPU, r.CPU)
				}
			}
		}
		text := ""
		if k.target > 0 {
			text = "< 100 ms"
		}
		b.timing("6 status", "status --json, "+k.label, walls, k.target, text)
		b.withCPU(cpu)
		if b.compare != "" {
			b.timing("6 status", "  the same with the -compare binary (before)", before, 0, "")
			b.withCPU(beforeCPU)
		}
	}
	return nil
}
