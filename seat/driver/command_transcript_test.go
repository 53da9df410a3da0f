package driver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat/state"
)

// settleAdapter is bareAdapter with a completion list under its input box,
// as Gemini CLI 0.61.0 draws one: a pasted command is settled only once the
// list shows that command alone (Capabilities.CommandSettled).
type settleAdapter struct{ bareAdapter }

func (settleAdapter) Caps() harness.Capabilities {
	return harness.Capabilities{CommandSettled: func(screen, text string) bool { return screen == settledBox(text) }}
}

// The box holding a pasted command with the whole command list below it
// (Enter would take the selected entry, /clear), and settled.
const listedBox = "> /compact\n  /about\n▶ /clear\n  /compact"

func settledBox(text string) string { return "> " + text + "\n▶ " + text }

// TestACommandWaitsForItsBoxToSettleOffTheLoop pins the command door on a
// harness whose completion list Enter would take: /compact is pasted and the
// door returns at once — the loop goes on, and the boundary holds the queue
// (nothing pasted while a command is in flight) — and Enter goes only once
// the box has shown the command settled for commandSettleHold, with the
// settled box on screen. Before, the driver slept in the loop for up to
// commandSettleLimit (5 s) between the paste and Enter.
func TestACommandWaitsForItsBoxToSettleOffTheLoop(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.Ad = settleAdapter{}
	settled := settledBox("/compact")
	// One frame a look (every 50 ms): the full list twice, settled, the list
	// again (the harness redraws), then settled for good.
	pane.then = map[string][]string{"paste": {listedBox, listedBox, settled, listedBox, settled}}
	queue(t, d, "m1", "board work")

	start := time.Now()
	d.startCycle(nil, "test: a boundary pantty chose", "")
	if got := strings.Join(pane.did(), "|"); got != "paste /compact" {
		t.Fatalf("pane actions as the door returned: %q, want the paste and no Enter yet", got)
	}
	d.maybeSubmit()
	if got := strings.Join(pane.did(), "|"); got != "paste /compact" {
		t.Fatalf("the queue moved while a command settles: %q", got)
	}

	loopAnswers(t, d, func() bool { return d.cmdRun == nil || !d.cmdRun.entering })
	took := time.Since(start)
	pane.mu.Lock()
	acts, shown := pane.actions, pane.shown
	pane.mu.Unlock()
	if got := strings.Join(acts, "|"); got != "paste /compact|keys Enter" {
		t.Fatalf("pane actions: %q, want Enter after the paste", got)
	}
	if shown[1] != settled {
		t.Errorf("Enter went with the pane showing %q, not the settled box", shown[2])
	}
	if took < commandSettleHold {
		t.Errorf("Enter went %s after the paste: the settled box must hold %s first", took, commandSettleHold)
	}
	if d.cycle == nil || d.cmdRun == nil {
		t.Fatalf("the cycle's /compact is no longer awaited after its Enter: cycle %v, command %v", d.cycle, d.cmdRun)
	}
}

// TestACommandThatNeverSettlesIsNotEntered: the box never shows the command
// settled within commandSettleLimit: no Enter, the box is cleared (it holds
// pantty's own paste), and the cycle that sent it fails saying so.
func TestACommandThatNeverSettlesIsNotEntered(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.Ad = settleAdapter{}
	pane.then = map[string][]string{"paste": {listedBox}}
	d.startCycle(nil, "test", "")
	loopAnswers(t, d, func() bool { return d.cmdRun == nil })
	if got := strings.Join(pane.did(), "|"); got != "paste /compact|keys C-u" {
		t.Fatalf("pane actions: %q, want the paste cleared and no Enter", got)
	}
	c, err := d.S.CycleFile().Read()
	if err != nil || c.State != "failed" || !strings.Contains(c.Error, "not entered") {
		t.Fatalf("cycle.toml: %+v, %v", c, err)
	}
}

// TestACommandSettlingWhenTheHarnessIsRelaunchedFails: the pane watch that
// was to send Enter watched a pane that is gone (its answer is dropped); the
// command timer's next tick fails the command instead of leaving it in flight,
// which would hold the queue for good.
func TestACommandSettlingWhenTheHarnessIsRelaunchedFails(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.Ad = settleAdapter{}
	pane.then = map[string][]string{"paste": {listedBox}}
	d.startCycle(nil, "test", "")
	d.launchAt = time.Now() // as launch() records a new harness
	d.onCommandTick()
	if d.cmdRun != nil {
		t.Fatal("the command is still in flight after a relaunch")
	}
	c, err := d.S.CycleFile().Read()
	if err != nil || c.State != "failed" || !strings.Contains(c.Error, "launched again") {
		t.Fatalf("cycle.toml: %+v, %v", c, err)
	}
}

// TestACommandNotPastedWaitsForTheBox pins what CI showed on Gemini CLI
// 0.61.0 (2026-12-06): the boundary found the box free, and 11 ms later the
// door's paste found none (the harness redrew its screen). Nothing reached
// the harness, so the cycle's /compact waits for the box, as a queued
// command does, and goes once it is back; it fails only when its wait is
// over, saying what stood there; a person in relay holds it back as it holds
// a first paste. Before, the cycle failed at once.
func TestACommandNotPastedWaitsForTheBox(t *testing.T) {
	t.Parallel()
	d, pane := cycleDriver(t)
	d.Ad = boxAdapter{}
	pane.show(dialogScreen)
	d.startCycle(nil, "test: a boundary pantty chose", "")
	d.onCommandTick()
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("keys went to the screen without a box: %q", got)
	}
	if c, err := d.S.CycleFile().Read(); err != nil || c.State != "requested" {
		t.Fatalf("cycle.toml while the box is away: %+v, %v", c, err)
	}
	if why := d.holdReason(); !strings.Contains(why, "/compact waits") || !strings.Contains(why, "fullscreen renderer") {
		t.Fatalf("hold reason while the box is away: %q", why)
	}

	// The box is back while a person holds the input (relay): still no key.
	pane.show(idleScreen)
	d.mode.Mode = state.ModeRelay
	d.onCommandTick()
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("the waiting command went to the pane during relay: %q", got)
	}
	if why := d.holdReason(); !strings.Contains(why, "relay") {
		t.Fatalf("hold reason during relay: %q", why)
	}
	d.mode.Mode = state.ModeDirect
	d.onCommandTick()
	answerWatches(t, d)
	if got := strings.Join(pane.did(), "|"); got != "paste /compact|keys Enter" {
		t.Fatalf("pane actions once the box was back: %q, want /compact entered", got)
	}
	if d.cmdRun == nil || d.cmdRun.entering || d.cycle == nil {
		t.Fatalf("the cycle's /compact is not awaited after its Enter: command %+v", d.cmdRun)
	}
	if recs, _ := filepath.Glob(filepath.Join(d.S.Dir, "artifacts", "command-*.toml")); len(recs) != 1 {
		t.Fatalf("%d command records for one /compact pasted twice, want 1: %v", len(recs), recs)
	}

	// A second cycle whose box never comes back fails when its wait is over.
	d2, pane2 := cycleDriver(t)
	d2.Ad = boxAdapter{}
	d2.Cfg.Compaction.Timeout.Duration = 0
	pane2.show(dialogScreen)
	d2.startCycle(nil, "test: a boundary pantty chose", "")
	if c, err := d2.S.CycleFile().Read(); err != nil || c.State != "failed" || !strings.Contains(c.Error, "fullscreen renderer") {
		t.Fatalf("cycle.toml when the wait is over: %+v, %v", c, err)
	}
	if got := pane2.did(); len(got) != 0 || d2.cmdRun != nil {
		t.Fatalf("after the failed wait: pane %q, command %+v", got, d2.cmdRun)
	}
}
