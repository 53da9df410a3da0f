package machine

import (
	"testing"
	"time"
)

// TestAfterExit walks a harness through exits: one that came up resets the
// count before-ready; three in a row before ready give up; quick exits back
// off, a long-lived one relaunches at once.
func TestAfterExit(t *testing.T) {
	const limit = 3
	cases := []struct {
		name     string
		x        Exits
		wasReady bool
		up       time.Duration
		want     Relaunch
	}{
		{"first exit, after a long run", Exits{}, true, time.Hour, Relaunch{Exits: Exits{}, After: 0}},
		{"first quick exit: at once", Exits{}, true, time.Second, Relaunch{Exits: Exits{Quick: 1}, After: 0}},
		{"second quick exit: 1 s", Exits{Quick: 1}, true, time.Second, Relaunch{Exits: Exits{Quick: 2}, After: time.Second}},
		{"fourth quick exit: 4 s", Exits{Quick: 3}, true, time.Second, Relaunch{Exits: Exits{Quick: 4}, After: 4 * time.Second}},
		{"a long run ends the quick streak", Exits{Quick: 5}, true, QuickExit, Relaunch{Exits: Exits{}, After: 0}},
		{"up again resets before-ready", Exits{BeforeReady: 2}, true, time.Hour, Relaunch{Exits: Exits{}, After: 0}},
		{"second exit before ready", Exits{BeforeReady: 1, Quick: 1}, false, time.Second, Relaunch{Exits: Exits{BeforeReady: 2, Quick: 2}, After: time.Second}},
		{"third exit before ready: give up", Exits{BeforeReady: 2, Quick: 2}, false, time.Second, Relaunch{Exits: Exits{BeforeReady: 3, Quick: 2}, GiveUp: true}},
		{"before ready, but long after launch", Exits{}, false, time.Hour, Relaunch{Exits: Exits{BeforeReady: 1}, After: 0}},
	}
	for _, c := range cases {
		if got := AfterExit(c.x, c.wasReady, c.up, limit); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestAfterLaunchFailure: a relaunch that cannot be made counts as a launch
// that ended before the harness came up, backs off by that count, and gives
// up at the limit.
func TestAfterLaunchFailure(t *testing.T) {
	if got := AfterLaunchFailure(Exits{}, 3); got != (Relaunch{Exits: Exits{BeforeReady: 1}, After: time.Second}) {
		t.Errorf("first failure: %+v", got)
	}
	if got := AfterLaunchFailure(Exits{BeforeReady: 1, Quick: 4}, 3); got != (Relaunch{Exits: Exits{BeforeReady: 2, Quick: 4}, After: 2 * time.Second}) {
		t.Errorf("second failure: %+v", got)
	}
	if got := AfterLaunchFailure(Exits{BeforeReady: 2}, 3); !got.GiveUp || got.Exits.BeforeReady != 3 {
		t.Errorf("third failure: %+v", got)
	}
}

// TestRelaunchDelay: none for the first quick exit, then doubling from 1 s,
// capped at a minute (and at overflow).
func TestRelaunchDelay(t *testing.T) {
	want := map[int]time.Duration{0: 0, 1: 0, 2: time.Second, 3: 2 * time.Second, 4: 4 * time.Second, 8: time.Minute, 30: time.Minute, 100: time.Minute}
	for n, d := range want {
		if got := RelaunchDelay(n); got != d {
			t.Errorf("RelaunchDelay(%d) = %s, want %s", n, got, d)
		}
	}
}
