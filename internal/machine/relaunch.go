package machine

import "time"

// QuickExit is how soon after its launch an exit counts as "did not stay
// up" for the relaunch back-off.
const QuickExit = 10 * time.Second

// Exits counts a harness's exits in a row, as the relaunch decision weighs
// them.
type Exits struct {
	// BeforeReady counts launches in a row that ended before the harness
	// came up (an exit, or a launch that could not even be made).
	BeforeReady int
	// Quick counts exits in a row within QuickExit of their launch.
	Quick int
}

// Relaunch is what follows an exit: the counts after it, and either giving
// up or relaunching After this long (0: at once).
type Relaunch struct {
	Exits  Exits
	GiveUp bool
	After  time.Duration
}

// AfterExit decides what follows the harness's exit, up after its launch.
// An exit after the harness came up resets the count of launches that ended
// before it; maxBeforeReady of those in a row give up (the words of a
// missing key or a broken binary do not change in seconds). A harness that
// keeps exiting soon after launch is relaunched with a growing back-off, so
// it cannot spin the pane.
func AfterExit(x Exits, wasReady bool, up time.Duration, maxBeforeReady int) Relaunch {
	if wasReady {
		x.BeforeReady = 0
	} else {
		x.BeforeReady++
	}
	if x.BeforeReady >= maxBeforeReady {
		return Relaunch{Exits: x, GiveUp: true}
	}
	if up < QuickExit {
		x.Quick++
	} else {
		x.Quick = 0
	}
	return Relaunch{Exits: x, After: RelaunchDelay(x.Quick)}
}

// AfterLaunchFailure decides what follows a relaunch that could not be made
// (no binary, an unreadable env_file): it counts as a launch that ended
// before the harness came up, and the next try backs off by that count.
func AfterLaunchFailure(x Exits, maxBeforeReady int) Relaunch {
	x.BeforeReady++
	if x.BeforeReady >= maxBeforeReady {
		return Relaunch{Exits: x, GiveUp: true}
	}
	return Relaunch{Exits: x, After: RelaunchDelay(x.BeforeReady + 1)}
}

// RelaunchDelay is the back-off before relaunching after n quick exits in a
// row: none for the first, then 1s, 2s, 4s … capped at a minute.
func RelaunchDelay(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := time.Second << (n - 2)
	if d > time.Minute || d <= 0 {
		return time.Minute
	}
	return d
}
