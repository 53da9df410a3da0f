package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// hookCost measures `pantty hook` per call, the way the harness runs it (the
// harness waits on it: a slow hook delays the seat): the process alone, and
// through `sh -c` as the simulator and Claude Code start it. Payloads are the
// shapes the harness sends, with a guarded prompt of a typical size.
func (b *bench) hookCost() error {
	home, _ := b.home("hook")
	rs, err := b.newRealSeat(home, "", "hk")
	if err != nil {
		return err
	}
	s := rs.s
	sid := state.NewSessionID()
	sub, err := guard.Guard(guard.Message{ID: "h-1", From: "alice", Board: "main", Text: strings.Repeat("please review the change in pkg/x and report ", 10)}, guard.DefaultDispatchFacts)
	if err != nil {
		return err
	}
	base := map[string]any{"session_id": sid, "transcript_path": "/tmp/none.jsonl", "cwd": b.work, "permission_mode": "default"}
	payload := func(kind string, extra map[string]any) string {
		p := map[string]any{"hook_event_name": kind}
		for k, v := range base {
			p[k] = v
		}
		for k, v := range extra {
			p[k] = v
		}
		data, _ := json.Marshal(p)
		return string(data)
	}
	ups := payload(hookwire.EvUserPromptSubmit, map[string]any{"prompt_id": state.NewSessionID(), "prompt": sub.Text()})
	stop := payload(hookwire.EvStop, map[string]any{"prompt_id": state.NewSessionID(), "stop_hook_active": false, "last_assistant_message": "sim: received 512 chars"})
	usage := func(i int) string {
		data, _ := json.Marshal(map[string]any{"session_id": sid, "model": map[string]any{"id": "sim-1"}, "version": "sim-0.1",
			"context_window": map[string]any{"context_window_size": 200000, "used_percentage": 7.1,
				"current_usage": map[string]any{"input_tokens": 120 + i, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 12000, "output_tokens": 30}}})
		return string(data)
	}
	env := b.env(home, "")
	n := b.pick(100, 400)
	var upsD, stopD, slD, shD, upsCPU, beforeD, beforeCPU, helloD, helloCPU durs
	var maxRSS int64
	for i := 0; i < n; i++ {
		r := b.runIn(env, ups, "--home", home, "hook", "--seat", "hk")
		if r.Code != 0 {
			return fmt.Errorf("hook UserPromptSubmit: %s", r)
		}
		if r.Stdout != "" {
			return fmt.Errorf("hook printed on UserPromptSubmit (that would enter the model's context): %q", r.Stdout)
		}
		upsD, upsCPU = append(upsD, r.Wall), append(upsCPU, r.CPU)
		maxRSS = max(maxRSS, r.MaxRSSKB)
		// Run for run: the binary from before a change, and the floor.
		if b.compare != "" {
			r := b.runBin(b.compare, env, ups, "--home", home, "hook", "--seat", "hk")
			if r.Code != 0 {
				return fmt.Errorf("hook UserPromptSubmit (-compare binary): %s", r)
			}
			beforeD, beforeCPU = append(beforeD, r.Wall), append(beforeCPU, r.CPU)
		}
		if b.hello != "" {
			r := b.runBin(b.hello, env, "")
			if r.Code != 0 {
				return fmt.Errorf("hello-world: %s", r)
			}
			helloD, helloCPU = append(helloD, r.Wall), append(helloCPU, r.CPU)
		}
		r = b.runIn(env, stop, "--home", home, "hook", "--seat", "hk")
		if r.Code != 0 {
			return fmt.Errorf("hook Stop: %s", r)
		}
		stopD = append(stopD, r.Wall)
		maxRSS = max(maxRSS, r.MaxRSSKB)
		r = b.runIn(env, usage(i), "--home", home, "hook", "--seat", "hk", "--status-line")
		if r.Code != 0 {
			return fmt.Errorf("hook --status-line: %s", r)
		}
		slD = append(slD, r.Wall)
		maxRSS = max(maxRSS, r.MaxRSSKB)
		// The way the harness runs it: sh -c with the settings' command line.
		t := time.Now()
		cmd := exec.Command("/bin/sh", "-c", launch.HookCommand(b.pantty, s))
		cmd.Env = env
		cmd.Stdin = strings.NewReader(ups)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("sh -c hook: %v: %s", err, out)
		}
		shD = append(shD, time.Since(t))
	}
	b.timing("4 hook", "pantty hook, UserPromptSubmit (process)", upsD, 0, "")
	b.withCPU(upsCPU)
	if b.hello != "" {
		// Target: a hook start costs at most twice a Go hello-world's.
		r := &b.rows[len(b.rows)-1]
		ratio := r.MedMS / ms(helloD.median())
		r.Base, r.Ratio, r.Target, r.Met = fmtD(helloD.median()), fmt.Sprintf("%.2f× the hello-world", ratio), "≤ 2× a Go hello-world", metText(ratio <= 2)
	}
	if b.compare != "" {
		b.timing("4 hook", "  the same with the -compare binary (before)", beforeD, 0, "")
		b.withCPU(beforeCPU)
	}
	if b.hello != "" {
		b.timing("4 hook", "  a Go hello-world (fmt.Println), the floor of a process start", helloD, 0, "")
		b.withCPU(helloCPU)
	}
	b.timing("4 hook", "pantty hook, Stop (process)", stopD, 0, "")
	b.timing("4 hook", "pantty hook --status-line, usage changed (process)", slD, 0, "")
	b.timing("4 hook", "sh -c '<hook command>', UserPromptSubmit (as the harness runs it)", shD, 0, "")
	b.add(row{Section: "4 hook", What: "pantty hook peak RSS (VmHWM, max over all calls)", Median: fmt.Sprintf("%.1f MiB", float64(maxRSS)/1024)})
	evs, _ := s.PendingEvents()
	calls := 4 * n
	if b.compare != "" {
		calls += n // the -compare binary's UserPromptSubmit
	}
	b.check("hook: one event file per call", len(evs) == calls, "%d calls that record an event (UserPromptSubmit twice, Stop, status line with changed usage; the -compare binary's UserPromptSubmit): %d event files", calls, len(evs))
	return nil
}
