package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// enqueue measures `pantty seat send` as a whole process (fork, exec, the
// guard, the temp file, fsync, the no-replace link, the directory fsync): one
// sender in sequence, then 8 concurrent senders (one process per message, and
// one --jsonl stream each), then 8 senders racing on the same ids. The seat
// has no driver, so nothing consumes the inbox; at the end every stored file
// is checked against what was sent: nothing lost, nothing stored twice, and
// exactly one sender per raced id was told "stored".
func (b *bench) enqueue() error {
	home, _ := b.home("enq")
	rs, err := b.newRealSeat(home, "", "enq")
	if err != nil {
		return err
	}
	env := b.env(home, "")
	want := map[string]string{} // id -> text every stored message must carry
	text := func(id string) string {
		return "board message " + id + ": please look at the failing build on main and report back"
	}

	// One sender, one process per message; the -compare binary, run for
	// run, sends to a seat of its own, so this one's inbox stays exact.
	if b.compare != "" {
		if _, err := b.newRealSeat(home, "", "enqb"); err != nil {
			return err
		}
	}
	n := b.pick(200, 1000)
	var seq, seqCPU, before, beforeCPU durs
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("e%05d", i)
		r := b.runIn(env, text(id), "seat", "send", "enq", "--id", id)
		if r.Code != 0 {
			return fmt.Errorf("send %s: %s", id, r)
		}
		want[id] = text(id)
		seq, seqCPU = append(seq, r.Wall), append(seqCPU, r.CPU)
		if b.compare != "" {
			r := b.runBin(b.compare, env, text(id), "seat", "send", "enqb", "--id", id)
			if r.Code != 0 {
				return fmt.Errorf("send %s (-compare binary): %s", id, r)
			}
			before, beforeCPU = append(before, r.Wall), append(beforeCPU, r.CPU)
		}
	}
	b.timing("1 enqueue", "seat send, one process per message (fsync included)", seq, 10*time.Millisecond, "median < 10 ms")
	b.withCPU(seqCPU)
	if b.compare != "" {
		b.timing("1 enqueue", "  the same with the -compare binary (before)", before, 0, "")
		b.withCPU(beforeCPU)
	}

	// Eight concurrent senders, one process per message.
	const senders = 8
	m := b.pick(50, 250)
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	start := time.Now()
	for k := 0; k < senders; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < m; j++ {
				id := fmt.Sprintf("c%d-%05d", k, j)
				r := b.runIn(env, text(id), "seat", "send", "enq", "--id", id)
				mu.Lock()
				if r.Code != 0 {
					errs = append(errs, id+": "+r.String())
				} else {
					want[id] = text(id)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if len(errs) > 0 {
		return fmt.Errorf("%d concurrent sends failed, first: %s", len(errs), errs[0])
	}
	rate := float64(senders*m) / wall.Seconds()
	b.add(row{Section: "1 enqueue", What: fmt.Sprintf("throughput, %d concurrent senders (process per message)", senders), N: senders * m,
		Median: fmt.Sprintf("%.0f msg/s", rate)})

	// Eight concurrent streams: one `seat send --jsonl` process per sender.
	start = time.Now()
	for k := 0; k < senders; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var in strings.Builder
			ids := make([]string, m)
			for j := 0; j < m; j++ {
				ids[j] = fmt.Sprintf("j%d-%05d", k, j)
				line, _ := json.Marshal(map[string]string{"id": ids[j], "from": "bench", "text": text(ids[j])})
				in.Write(append(line, '\n'))
			}
			r := b.runIn(env, in.String(), "seat", "send", "enq", "--jsonl")
			mu.Lock()
			defer mu.Unlock()
			if r.Code != 0 {
				errs = append(errs, fmt.Sprintf("stream %d: %s", k, r))
				return
			}
			for _, id := range ids {
				want[id] = text(id)
			}
		}()
	}
	wg.Wait()
	wall = time.Since(start)
	if len(errs) > 0 {
		return fmt.Errorf("stream sends failed: %s", errs[0])
	}
	b.add(row{Section: "1 enqueue", What: fmt.Sprintf("throughput, %d concurrent --jsonl streams", senders), N: senders * m,
		Median: fmt.Sprintf("%.0f msg/s", float64(senders*m)/wall.Seconds())})

	// Eight senders racing on the same ids: each id is stored once, and exactly
	// one of the eight is told it stored it (the others: duplicate, exit 0).
	races := b.pick(10, 40)
	badRace := 0
	for j := 0; j < races; j++ {
		id := fmt.Sprintf("dup-%03d", j)
		gate := make(chan struct{})
		res := make([]result, senders)
		for k := 0; k < senders; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				res[k] = b.runIn(env, text(id), "seat", "send", "enq", "--id", id)
			}()
		}
		close(gate)
		wg.Wait()
		stored := 0
		for _, r := range res {
			if r.Code != 0 {
				return fmt.Errorf("raced send %s: %s", id, r)
			}
			if !strings.Contains(r.Stdout, "duplicate") {
				stored++
			}
		}
		if stored != 1 {
			badRace++
		}
		want[id] = text(id)
	}
	b.check("enqueue: raced ids", badRace == 0, "%d ids each sent by %d concurrent senders: %d told 'stored' by other than exactly one sender", races, senders, badRace)

	// A restarted stream replays the board: every id is already stored, and
	// each line must be answered "duplicate" without writing anything.
	var replay strings.Builder
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("e%05d", i)
		line, _ := json.Marshal(map[string]string{"id": id, "text": text(id)})
		replay.Write(append(line, '\n'))
	}
	bins := []string{b.pantty}
	if b.compare != "" {
		bins = append(bins, b.compare)
	}
	for j, bin := range bins {
		r := b.runBin(bin, env, replay.String(), "seat", "send", "enq", "--jsonl")
		if r.Code != 0 || strings.Count(r.Stdout, "duplicate") != n {
			return fmt.Errorf("replay: want %d duplicates: %s", n, r)
		}
		what := fmt.Sprintf("replay: one --jsonl stream of %d already-stored ids", n)
		if j == 1 {
			what = "  the same with the -compare binary (before)"
		}
		b.add(row{Section: "1 enqueue", What: what, N: n, Median: fmt.Sprintf("%.0f msg/s", float64(n)/r.Wall.Seconds()), CPU: fmtD(r.CPU)})
	}

	// Nothing lost, nothing twice: the inbox holds exactly the ids sent, each
	// with its own text, and no temp file is left behind.
	lost, extra, wrong := 0, 0, 0
	ents, err := os.ReadDir(rs.s.MsgsDir())
	if err != nil {
		return err
	}
	got := map[string]bool{}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			extra++
			continue
		}
		if got[id] {
			extra++
		}
		got[id] = true
		st, err := rs.s.ReadStored(id)
		if err != nil || st.Text != want[id] {
			wrong++
		}
		if _, ok := want[id]; !ok {
			extra++
		}
	}
	for id := range want {
		if !got[id] {
			lost++
		}
	}
	tmpLeft, _ := os.ReadDir(rs.s.TmpDir())
	b.check("enqueue: no loss, no duplicate", lost == 0 && extra == 0 && wrong == 0 && len(tmpLeft) == 0,
		"%d distinct ids sent (%d sends); inbox holds %d files: %d lost, %d extra, %d with the wrong text, %d temp files left",
		len(want), n+2*senders*m+senders*races, len(ents), lost, extra, wrong, len(tmpLeft))
	return nil
}
