package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/claudecode/standin"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/state"
)

// claudeKey is the stand-in's API key: any key in Anthropic's shape reaches
// it; it goes nowhere else.
const claudeKey = "sk-ant-api03-standin-bench-000000000000000000000000"

// claudeFloorQuiet is how long the floor's typed text stands in the box
// before its Enter: Claude Code 2.1.328 draws typed keys at once, and a
// pause well past its 10 ms paste quiet (the adapter's PasteQuiet)
// makes the Enter the only thing the harness has left to take.
const claudeFloorQuiet = 300 * time.Millisecond

// claude measures delivery on the real Claude Code against its loopback
// stand-in, through a real driver: `seat send` returned → UserPromptSubmit
// evidence, and Stop → the message's final status. Its floor, interleaved
// message by message on the same seat: text typed into the input box by
// tmux (no paste, no driver), then Enter alone → the same evidence. What
// pantty adds above the floor is everything between `seat send` returning
// and the Enter: the driver's pickup of the stored message, its durable
// records (status, artifact, heartbeat, each fsync'd), the paste, its commit
// wait and the look before Enter. Skipped when no real Claude Code is installed
// (PANTTY_CLAUDE_BIN, or claude on PATH).
func (b *bench) claude() error {
	bin := os.Getenv("PANTTY_CLAUDE_BIN")
	if bin == "" {
		bin, _ = exec.LookPath("claude")
	}
	if bin == "" {
		b.logf("claude: skipped: no real Claude Code (set PANTTY_CLAUDE_BIN or put claude on PATH)")
		b.add(row{Section: "8 real Claude Code", What: "skipped: no real Claude Code (PANTTY_CLAUDE_BIN unset, no claude on PATH)", Median: "-"})
		return nil
	}
	api, err := standin.Start(standin.Options{LogPath: filepath.Join(b.root, "claude-requests.jsonl")})
	if err != nil {
		return err
	}
	defer api.Close()
	home, socket := b.home("cc")
	rs, err := b.newClaudeSeat(home, socket, bin, api.URL())
	if err != nil {
		return err
	}
	if r := b.runIn(b.env(home, socket), "", "seat", "prepare-home", rs.name); r.Code != 0 {
		return fmt.Errorf("seat prepare-home: %s", r)
	}
	w, err := newWatcher(rs.s, true)
	if err != nil {
		return err
	}
	defer w.close()
	if err := b.start(rs); err != nil {
		return err
	}
	sess, err := rs.s.SessionFile().Read()
	if err != nil {
		return err
	}
	env := b.env(home, socket)
	k := b.pick(10, 30)
	var sendToEv, stopToFinal, floor durs
	for i := range k {
		id := fmt.Sprintf("c%04d", i)
		r := b.runIn(env, "a delivery probe for the real harness "+id, "seat", "send", rs.name, "--id", id)
		sent := time.Now()
		if r.Code != 0 {
			return fmt.Errorf("send %s: %s", id, r)
		}
		if err := w.until("message "+id+" final", 60*time.Second, func() bool { _, ok := w.final(id); return ok }); err != nil {
			return fmt.Errorf("%v\ndriver.log:\n%s", err, readFile(rs.s.DriverLogPath()))
		}
		st, err := rs.s.ReadStatus(id)
		if err != nil {
			return err
		}
		if st.State != inbox.StateProcessed {
			return fmt.Errorf("message %s ended %s (%s %s)", id, st.State, st.Reason, st.Detail)
		}
		_, tUPS, ok := w.event(hookwire.EvUserPromptSubmit, promptFor(id))
		if !ok {
			return fmt.Errorf("no UserPromptSubmit evidence for %s", id)
		}
		sendToEv = append(sendToEv, tUPS.Sub(sent))
		if _, tStop, ok := w.event(hookwire.EvStop, stopFor(st.PromptID)); ok {
			tFinal, _ := w.final(id)
			stopToFinal = append(stopToFinal, tFinal.Sub(tStop))
		}
		time.Sleep(settle)

		d, err := b.enterAlone(w, socket, sess.PaneID, fmt.Sprintf("floor probe f%04d", i))
		if err != nil {
			return fmt.Errorf("%v\ndriver.log:\n%s", err, readFile(rs.s.DriverLogPath()))
		}
		floor = append(floor, d)
		time.Sleep(settle)
	}
	b.timing("8 real Claude Code", "seat send returned → UserPromptSubmit evidence", sendToEv, 0, "")
	r := &b.rows[len(b.rows)-1]
	above := sendToEv.median() - floor.median()
	r.Base, r.Ratio = fmtD(floor.median()), fmt.Sprintf("+%s above the floor", fmtD(above))
	r.Target, r.Met = "≤ Enter alone + 15 ms", metText(above <= 15*time.Millisecond)
	b.timing("8 real Claude Code", "  floor: text typed in the box, Enter alone → the same evidence", floor, 0, "")
	b.timing("8 real Claude Code", "Stop event → message final", stopToFinal, 0, "")
	if ad, err := harness.AdapterFor("claude-code"); err == nil {
		b.add(row{Section: "8 real Claude Code", What: fmt.Sprintf("  settle left per harness: Enter once the box shows the paste and the pane was quiet %s, bounded by paste_settle %s",
			ad.Caps().PasteQuiet, ad.PasteSettle().Duration), Median: "-"})
	}
	b.claudeOnce(api, k)
	return nil
}

// claudeOnce checks, from the stand-in's log, that every probe message
// reached the model in exactly one turn request.
func (b *bench) claudeOnce(api *standin.Server, k int) {
	count := map[string]int{}
	for _, q := range api.Requests() {
		if q.Kind == "turn" {
			for i := range k {
				if id := fmt.Sprintf("c%04d", i); strings.Contains(q.NewInput, "msg="+id+" ") {
					count[id]++
				}
			}
		}
	}
	bad := 0
	for i := range k {
		if count[fmt.Sprintf("c%04d", i)] != 1 {
			bad++
		}
	}
	b.check("real Claude Code: exactly once at the model", bad == 0, "%d messages sent; %d reached the model other than exactly once (stand-in request log)", k, bad)
}

// newClaudeSeat writes seat.toml for a Claude Code seat on bin whose API is
// the stand-in at url, with its own HOME (prepared by `seat prepare-home`).
func (b *bench) newClaudeSeat(home, socket, bin, url string) (*realSeat, error) {
	rs := &realSeat{home: home, socket: socket, name: "cc"}
	var err error
	if rs.s, err = state.Open(home, rs.name); err != nil {
		return nil, err
	}
	work := filepath.Join(b.work, "cc")
	chome := filepath.Join(b.root, "cc-home")
	for _, d := range []string{work, chome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	env := map[string]string{"HOME": chome, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": claudeKey, "CLAUDE_CODE_MAX_RETRIES": "0"}
	if err := seat.InitConfig(rs.s, "claude-code", work, env); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(rs.s.ConfigPath())
	if err != nil {
		return nil, err
	}
	text := strings.Replace(string(data), "[tmux]", fmt.Sprintf("command = %q\n\n[tmux]", bin), 1)
	return rs, os.WriteFile(rs.s.ConfigPath(), []byte(text), 0o600)
}

// enterAlone types text into the pane's input box with tmux (keys, not a
// paste), waits until the box shows it and claudeFloorQuiet more, and
// returns the time from Enter to the UserPromptSubmit carrying it. The clock
// starts when `tmux send-keys Enter` has returned, so the client process's
// own start (about 1.7 ms here) is not part of the floor: the floor is the
// harness's share alone, and the figure above it is pantty's whole cost.
func (b *bench) enterAlone(w *watcher, socket, pane, text string) (time.Duration, error) {
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(b.realTmux, append([]string{"-u", "-f", "/dev/null", "-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tm("send-keys", "-t", pane, "-l", text); err != nil {
		return 0, fmt.Errorf("type into the box: %v: %s", err, out)
	}
	if err := w.until("the box to show the floor probe", 10*time.Second, func() bool {
		screen, err := tm("capture-pane", "-p", "-t", pane)
		return err == nil && strings.Contains(screen, text)
	}); err != nil {
		return 0, err
	}
	time.Sleep(claudeFloorQuiet)
	stops := w.count(hookwire.EvStop)
	if out, err := tm("send-keys", "-t", pane, "Enter"); err != nil {
		return 0, fmt.Errorf("send Enter: %v: %s", err, out)
	}
	enter := time.Now()
	carries := func(ev hookwire.Event) bool { return strings.Contains(ev.Fields.Prompt, text) }
	if err := w.until("the floor probe's UserPromptSubmit", 30*time.Second, func() bool {
		_, _, ok := w.event(hookwire.EvUserPromptSubmit, carries)
		return ok
	}); err != nil {
		return 0, err
	}
	_, t, _ := w.event(hookwire.EvUserPromptSubmit, carries)
	// The person's turn ends before the next probe: the next Stop.
	if err := w.until("the floor probe's turn end", 30*time.Second, func() bool { return w.count(hookwire.EvStop) > stops }); err != nil {
		return 0, err
	}
	return t.Sub(enter), nil
}
