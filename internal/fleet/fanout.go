package fleet

import (
	"context"
	"sync"
)

// FanOut makes the same call on every host at once and returns the replies in
// the hosts' order. Each host has its own bound: a slow or dead host costs the
// listing its bound, never more, and shows as unknown, not as zero seats.
func FanOut(ctx context.Context, hosts []Host, c Call) []Reply {
	out := make([]Reply, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = h.Run(ctx, c)
		}()
	}
	wg.Wait()
	return out
}
