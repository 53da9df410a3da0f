package measure_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/sim"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/flight"
	"github.com/pantty/pantty/seat/measure"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// TestPasteCommitTiming measures, on each harness named in
// PANTTY_MEASURE_PASTE (comma-separated adapter names; "sim" included),
// when a bracketed paste shows in the input box and when an Enter is taken
// as a submission rather than a newline in it (docs/performance-history.md, "Enter
// on the paste's commit"). It drives the pane itself, through the
// control-mode client and its %output change events, after releasing the
// throwaway seat's driver. Each mode runs PANTTY_MEASURE_PASTE_N trials
// (default 10): "at=D" sends Enter D after the paste's acknowledgement
// whatever the pane shows; "quiet=X" sends it once the box shows text and
// the pane has printed nothing for X. A trial whose Enter became a newline
// (no model turn within 3 s) is entered again and counted as such; a text
// that reached the model twice fails the test.
func TestPasteCommitTiming(t *testing.T) {
	which := os.Getenv("PANTTY_MEASURE_PASTE")
	if which == "" {
		t.Skip("a measurement: set PANTTY_MEASURE_PASTE=claude-code,codex,gemini-cli,sim")
	}
	n := 10
	if v, err := strconv.Atoi(os.Getenv("PANTTY_MEASURE_PASTE_N")); err == nil && v > 0 {
		n = v
	}
	modes := strings.Split(os.Getenv("PANTTY_MEASURE_PASTE_MODES"), ",")
	if modes[0] == "" {
		modes = []string{"at=0", "at=5ms", "at=20ms", "quiet=0", "quiet=20ms"}
	}
	all := map[string]func(harness.MeasureSpec) (harness.MeasureRig, error){"sim": sim.Adapter{}.Measure}
	bins := map[string]func() (string, error){}
	for _, h := range realHarnesses {
		all[h.ad.Name()] = h.ad.Caps().Measure
		bins[h.ad.Name()] = h.binary
	}
	for _, name := range strings.Split(which, ",") {
		t.Run(name, func(t *testing.T) {
			spec := harness.MeasureSpec{Dir: tmuxtest.Dir(t)}
			if b := bins[name]; b != nil {
				bin, err := b()
				if err != nil {
					t.Skip(err)
				}
				spec.Bin = bin
			} else if env := os.Getenv("PANTTY_MEASURE_PASTE_SIMENV"); env != "" {
				k, v, _ := strings.Cut(env, "=")
				spec.Env = map[string]string{k: v}
			}
			rig, err := all[name](spec)
			if err != nil {
				t.Fatal(err)
			}
			if rig.Close != nil {
				defer rig.Close()
			}
			th, err := measure.StartThrowaway(rig, measure.Options{Pantty: seattest.Binary(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer th.Close()
			measurePaste(t, name, th, n, modes)
		})
	}
}

// pasteTrial is one paste and its Enter.
type pasteTrial struct {
	show, enter, last time.Duration // after the paste's ack: the box first showed text, Enter went, the last change before Enter
	changesAfter      int           // pane changes between the first show and Enter
	submitted         bool          // the first Enter reached the model
}

func measurePaste(t *testing.T, name string, th measure.Throwaway, n int, modes []string) {
	s := th.Seat()
	if _, err := s.Ask(state.Request{Kind: state.CtlRelease}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if !seat.WaitFree(s, 10*time.Second) {
		t.Fatal("the driver did not release the seat")
	}
	lock, err := seat.Acquire(s)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	sess, err := s.SessionFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := s.LoadConfig()
	ad, err := harness.AdapterFor(cfg.Harness)
	if err != nil {
		t.Fatal(err)
	}
	conn := tmux.NewConn(tmux.New(sess.Socket), sess.TmuxName, t.Logf)
	defer conn.Close()
	pane := flight.Pane{Keys: conn, ID: sess.PaneID}
	box := flight.Box{Busy: ad.Busy, Composer: ad.Caps().Composer}
	det := th.Detector()
	ctx := context.Background()
	changed, release, ok := conn.Follow(ctx)
	if !ok {
		t.Fatal("no change events")
	}
	defer release()
	screenOf := func() string { s, _ := pane.Screen(ctx); return s }
	idle := func() {
		ok := flight.Await(pane, flight.Wait{Every: 50 * time.Millisecond, Limit: 30 * time.Second, Hold: 300 * time.Millisecond,
			Cond: func(sc string) bool {
				l := box.Read(sc)
				return !l.Busy && l.Dialog == "" && l.Draft == "" && !l.Leftover
			}})
		if !ok {
			t.Fatalf("no idle empty box: %s", screenOf())
		}
	}
	t.Logf("%s %s, %s", name, det.Build(), time.Now().UTC().Format(time.RFC3339))
	for _, mode := range modes {
		kind, arg, _ := strings.Cut(mode, "=")
		d, err := time.ParseDuration(arg)
		if arg == "0" {
			d, err = 0, nil
		}
		if err != nil {
			t.Fatalf("mode %q", mode)
		}
		var trials []pasteTrial
		for i := range n {
			idle()
			for len(changed) > 0 {
				<-changed
			}
			marker := fmt.Sprintf("pc-%d-%s-%d", time.Now().UnixNano()%1e9, strings.ReplaceAll(mode, "=", ""), i)
			text := "[pantty " + marker + "] measured paste\n--- begin ---\nline one of the body\nline two of the body\n--- end ---"
			since := time.Now()
			if err := pane.Put(ctx, text); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			var tr pasteTrial
			last := t0
			var quiet *time.Timer
			fire := make(chan struct{}, 1)
			if kind == "at" {
				quiet = time.AfterFunc(d, func() { fire <- struct{}{} })
			}
			look := func() {
				if tr.show == 0 && box.Shows(screenOf()) {
					tr.show = time.Since(t0)
					if kind == "quiet" {
						quiet = time.AfterFunc(max(0, d-time.Since(last)), func() { fire <- struct{}{} })
					}
				}
			}
			look()
			deadline := time.After(5 * time.Second)
		wait:
			for {
				select {
				case <-changed:
					last = time.Now()
					if tr.show != 0 {
						tr.changesAfter++
						if kind == "quiet" {
							quiet.Reset(d)
						}
					}
					look()
				case <-fire:
					break wait
				case <-deadline:
					t.Fatalf("%s: no Enter due within 5 s (box: %q)", mode, screenOf())
				}
			}
			if err := pane.Enter(ctx); err != nil {
				t.Fatal(err)
			}
			tr.enter, tr.last = time.Since(t0), last.Sub(t0)
			o := det.Observe(marker, since, 3*time.Second)
			tr.submitted = o.ReachedModel
			if !o.ReachedModel {
				sc := screenOf()
				t.Logf("%s trial %d: the first Enter did not submit (Enter %s after the paste, box first shown %s); box now %q",
					mode, i, tr.enter.Round(100*time.Microsecond), tr.show.Round(100*time.Microsecond), composerOf(box, sc))
				reached := false
				for k := 0; k < 5 && !reached; k++ {
					if err := pane.Enter(ctx); err != nil {
						t.Fatal(err)
					}
					reached = det.Observe(marker, since, 3*time.Second).ReachedModel
				}
				if !reached {
					t.Errorf("%s trial %d: not submitted by 5 more Enters either; screen:\n%s", mode, i, screenOf())
					pane.Interrupt(ctx)
					pane.Interrupt(ctx)
					pane.Clear(ctx)
					trials = append(trials, tr)
					continue
				}
			}
			count := 0
			for _, r := range det.ModelRequests() {
				if r.Kind == "turn" && strings.Contains(r.NewInput, marker) {
					count++
				}
			}
			if count != 1 {
				t.Errorf("%s trial %d: %d model turns carried the text", mode, i, count)
			}
			trials = append(trials, tr)
		}
		report(t, name, mode, trials)
	}
}

func composerOf(b flight.Box, screen string) string {
	text, _ := b.Composer(screen)
	return text
}

func report(t *testing.T, name, mode string, trials []pasteTrial) {
	var show, enter, last []time.Duration
	subm, changes := 0, 0
	for _, tr := range trials {
		show, enter, last = append(show, tr.show), append(enter, tr.enter), append(last, tr.last)
		if tr.submitted {
			subm++
		}
		changes += tr.changesAfter
	}
	med := func(x []time.Duration) string {
		slices.Sort(x)
		return fmt.Sprintf("median %s worst %s", x[len(x)/2].Round(100*time.Microsecond), x[len(x)-1].Round(100*time.Microsecond))
	}
	t.Logf("RESULT %s %s n=%d: submitted by the first Enter %d/%d; box shows: %s; last change: %s; Enter: %s; changes after show %d",
		name, mode, len(trials), subm, len(trials), med(show), med(last), med(enter), changes)
}
