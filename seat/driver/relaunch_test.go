package driver

import (
	"testing"
	"time"
)

func TestRelaunchBacksOffAHarnessThatKeepsExiting(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{0: 0, 1: 0, 2: time.Second, 3: 2 * time.Second, 4: 4 * time.Second, 30: time.Minute, 100: time.Minute}
	want[8] = time.Minute // 64s is capped
	for n, d := range want {
		if got := relaunchDelay(n); got != d {
			t.Errorf("relaunchDelay(%d) = %s, want %s", n, got, d)
		}
	}
}
