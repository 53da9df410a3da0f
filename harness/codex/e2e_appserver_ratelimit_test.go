package codex_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex/standin"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// TestAppServerSeatWaitsForAUsedUpWindow: an app-server seat reads the
// account's rate-limit windows from account/rateLimits/updated. Below 100 %
// nothing is held (the control: the next message goes at once, no provider
// block). A turn whose answer says the primary window is used up (100 %,
// resetting in a few seconds) is itself processed; the message after it
// waits — not failed, not sent (counted at the stand-in) — with the seat in
// waiting-provider and `pantty status` naming the wait as a refused turn's
// is named (usage_limit until the reset); once the reset passes it goes,
// once.
func TestAppServerSeatWaitsForAUsedUpWindow(t *testing.T) {
	r := newRig(t, "cxasr", `transport = "app-server"`)
	r.Start()

	// The control: a window below 100 % holds nothing.
	r.api.SetLimits(&standin.Limits{Primary: &standin.Window{UsedPercent: 99, WindowMinutes: 300, ResetAt: time.Now().Add(time.Hour)}})
	r.Send("rl-0", "below the limit")
	r.Processed("rl-0")
	t0 := time.Now()
	r.Send("rl-1", "still below the limit")
	r.Processed("rl-1")
	t.Logf("control: the message after a 99 %% window processed %s after its send", time.Since(t0).Round(time.Millisecond))
	if bs, err := outage.ReadBlocks(r.Home); err != nil || len(bs) != 0 {
		t.Fatalf("a window below 100 %% left provider blocks %v (%v)", bs, err)
	}

	// The window used up on a turn that itself completes.
	reset := time.Now().Add(8 * time.Second).Truncate(time.Second).Add(time.Second)
	r.api.SetLimits(&standin.Limits{Primary: &standin.Window{UsedPercent: 100, WindowMinutes: 300, ResetAt: reset}})
	r.Send("rl-2", "the turn that uses the window up")
	r.Processed("rl-2")
	r.Send("rl-3", "after the window is used up")
	want := "usage_limit until " + reset.UTC().Format(time.RFC3339)
	r.WaitFor("the seat waiting for the provider", 10*time.Second, func() bool {
		hb, err := r.Seat().HeartbeatFile().Read()
		return err == nil && hb.Phase == state.PhaseProvider && strings.Contains(hb.Waiting, want)
	})
	st := r.Status("rl-3")
	res := r.Run("status", r.Name)
	waitedAt := time.Now()
	if inbox.Final(st.State) || st.Attempts != 0 || r.Turns()["rl-3"] != 0 {
		t.Fatalf("rl-3 during the wait: %s, %d attempts, %d turns at the stand-in", st.State, st.Attempts, r.Turns()["rl-3"])
	}
	if !strings.Contains(res.Stdout, want) || !strings.Contains(res.Stdout, "primary window (300 min) 100% used") {
		t.Fatalf("pantty status does not name the wait %q:\n%s", want, res)
	}
	t.Logf("status during the wait (%s before the reset):\n%s", time.Until(reset).Round(time.Millisecond), res.Stdout)
	r.api.SetLimits(nil) // the window has reset: the backend says nothing more
	r.Processed("rl-3")
	var at time.Time
	for _, q := range r.api.Requests() {
		if id, _, _, ok := guard.MatchHeader(q.NewInput); ok && id == "rl-3" && q.Kind == "turn" {
			at = q.At
		}
	}
	if n := r.Turns()["rl-3"]; n != 1 || at.Before(reset) {
		t.Fatalf("rl-3 reached the model %d times, at %s (the reset %s)", n, at.Format(time.RFC3339Nano), reset.Format(time.RFC3339))
	}
	t.Logf("rl-3 reached the stand-in %s after the reset (the wait seen %s before it)", at.Sub(reset).Round(time.Millisecond), reset.Sub(waitedAt).Round(time.Millisecond))
}

// escapeAgain is how long a person waits for the viewer's dialog to close
// before pressing Escape again.
const escapeAgain = 3 * time.Second

// TestAppServerSeatCapsAndReleasesAPredictedWait: a used-up window whose
// reset is days ahead (the weekly one) is trusted no further than
// [recovery] provider_max_wait, as a refusal's parsed reset is; and a later
// note saying the account can go on — here from a person's turn at the
// viewer, the board held — releases the block the prediction made, so the
// held message goes at once rather than at the cap.
func TestAppServerSeatCapsAndReleasesAPredictedWait(t *testing.T) {
	r := newRig(t, "cxasw", `transport = "app-server"`, "[recovery]", `provider_max_wait = "60s"`)
	pane := viewerReady(t, r)
	week := time.Now().Add(7 * 24 * time.Hour)
	r.api.SetLimits(&standin.Limits{Secondary: &standin.Window{UsedPercent: 100, WindowMinutes: 10080, ResetAt: week}})
	r.Send("w1", "the turn that uses the weekly window up")
	r.Processed("w1")
	r.Send("w2", "held behind the prediction")
	var b state.Block
	r.WaitFor("the predicted block", 10*time.Second, func() bool {
		bs, err := outage.ReadBlocks(r.Home)
		b = bs["codex"]
		return err == nil && !b.Until.IsZero()
	})
	if left := time.Until(b.Until); left > 61*time.Second || left < 40*time.Second {
		t.Fatalf("the block of a reset 7 days ahead ends in %s, want the 60 s cap: %+v", left.Round(time.Second), b)
	}
	// The account can go on (the window reset early): a person's turn at
	// the viewer brings the note that says so.
	r.api.SetLimits(&standin.Limits{Secondary: &standin.Window{UsedPercent: 3, WindowMinutes: 10080, ResetAt: week}})
	// The viewer meets the used-up window with a dialog of its own
	// ("Approaching rate limits / Switch to gpt-6-luna …?", Codex 0.171.0):
	// the person dismisses it with Escape before typing (an Enter on it
	// would switch the thread's model).
	//
	// An Escape sent as the dialog is drawn can be lost: in one CI run and
	// 2 of 17 local runs (the first of a test process each time) the dialog
	// still stood 30 s after it (the window's note comes 6–11 ms before the
	// turn's end, so the TUI may still take Escape for the running turn's).
	// A person presses again; so does this, while the dialog is still on
	// the screen, every escapeAgain.
	r.WaitFor("the viewer's rate-limit dialog", 30*time.Second, func() bool { return strings.Contains(r.Screen(), "Approaching rate limits") })
	var screen string
	var escaped time.Time
	escapes := 0
	r.WaitFor("the viewer's input box", 30*time.Second, func() bool {
		screen = r.Screen()
		if strings.Contains(screen, "Approaching rate limits") {
			if time.Since(escaped) >= escapeAgain {
				if err := r.Tmux().SendKeys(context.Background(), pane, "Escape"); err != nil {
					t.Fatal(err)
				}
				escaped, escapes = time.Now(), escapes+1
			}
			return false
		}
		return strings.Contains(screen, "Ask Codex to do anything")
	})
	t.Logf("the dialog took %d Escape(s)", escapes)
	t0 := time.Now()
	personTypes(t, r, pane, "a person asks while the board waits")
	r.Processed("w2")
	t.Logf("w2 processed %s after the person's Enter (the cap would have held it %s more)", time.Since(t0).Round(time.Millisecond), time.Until(b.Until).Round(time.Second))
	if !strings.Contains(r.DriverLog(), "the block it predicted is released") {
		t.Fatalf("no release in driver.log:\n%s", r.DriverLog())
	}
	if n := r.Turns()["w2"]; n != 1 {
		t.Fatalf("w2 reached the model %d times", n)
	}
}
