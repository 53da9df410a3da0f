package recover_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/scripts/bench/synth"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// BenchmarkSweep measures one recovery sweep over N healthy seats in process:
// synthetic seats (this process holds every owner.lock and writes every
// heartbeat; each harness pane is a `sleep` in ONE tmux server), so the figure
// is the sweep's own cost — state files read, one `list-panes -a` per socket,
// health.toml written per seat — without N drivers competing for the CPU.
// tmux/op is the sweep's own count of tmux invocations (it must stay 1 here:
// one socket). The whole-process figure, with a counting tmux wrapper, is in
// scripts/bench.sh.
//
//	go test -run '^$' -bench Sweep ./recover/
func BenchmarkSweep(b *testing.B) {
	for _, c := range []struct{ n, history int }{{1, 5}, {10, 5}, {100, 5}, {1, 1000}} {
		n := c.n
		b.Run(fmt.Sprintf("seats=%d/history=%d", n, c.history), func(b *testing.B) {
			set := buildSet(b, n, c.history)
			opts := recover.Options{Home: set.Opts.Home, Pantty: "/bin/false"}
			// A dry run first: a synthetic seat that is not ok would make a real
			// sweep act on it (start a driver), which is not what is measured.
			dry := opts
			dry.DryRun = true
			rep, err := recover.Sweep(dry)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range rep.Seats {
				if s.Verdict != recover.OK {
					b.Fatalf("synthetic seat %s is %s: %s", s.Seat, s.Verdict, s.Reason)
				}
			}
			b.ResetTimer()
			calls := 0
			for i := 0; i < b.N; i++ {
				rep, err := recover.Sweep(opts)
				if err != nil || rep.Code != 0 {
					b.Fatalf("sweep: code %d, %v", rep.Code, err)
				}
				calls += rep.TmuxCalls
			}
			b.ReportMetric(float64(calls)/float64(b.N), "tmux/op")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/seat")
		})
	}
}

// BenchmarkSweepDryRun is the same sweep observing only (no lock, no
// health.toml writes): the difference to BenchmarkSweep is the cost of the
// records a real sweep keeps.
func BenchmarkSweepDryRun(b *testing.B) {
	set := buildSet(b, 100, 5)
	opts := recover.Options{Home: set.Opts.Home, Pantty: "/bin/false", DryRun: true}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := recover.Sweep(opts); err != nil {
			b.Fatal(err)
		}
	}
}

func buildSet(b *testing.B, n, history int) *synth.Set {
	b.Helper()
	dir := tmuxtest.Dir(b)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		b.Fatal(err)
	}
	set, err := synth.Build(synth.Options{Home: filepath.Join(dir, "home"), Work: work, N: n,
		Socket: filepath.Join(dir, "S"), Pantty: "/bin/false", History: history})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(set.Close)
	return set
}
