package telemetry_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pantty/pantty/scripts/bench/synth"
	"github.com/pantty/pantty/seat/telemetry"
)

// BenchmarkRead measures the readings behind `pantty status --json` in
// process: Read over N synthetic seats (live owner, fresh heartbeat, a
// history of processed messages with their events, a context reading), then the JSON
// encoding status prints. No tmux is involved (status never asks tmux). The
// whole-process figure is in scripts/bench.sh.
//
//	go test -run '^$' -bench Read ./seat/telemetry/
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct{ n, history int }{{1, 5}, {100, 5}, {1, 1000}} {
		n := c.n
		b.Run(fmt.Sprintf("seats=%d/history=%d", n, c.history), func(b *testing.B) {
			dir := b.TempDir()
			work := filepath.Join(dir, "work")
			if err := os.MkdirAll(work, 0o700); err != nil {
				b.Fatal(err)
			}
			set, err := synth.Build(synth.Options{Home: filepath.Join(dir, "home"), Work: work, N: n, History: c.history})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(set.Close)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now := time.Now()
				rows, err := telemetry.Read(set.Opts.Home, now)
				if err != nil || len(rows) != n {
					b.Fatalf("read: %d rows, %v", len(rows), err)
				}
				enc := json.NewEncoder(io.Discard)
				enc.SetIndent("", "  ")
				if err := enc.Encode(telemetry.Document{Version: telemetry.Version, At: now.UTC(), Home: set.Opts.Home, Seats: rows}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/seat")
		})
	}
}
