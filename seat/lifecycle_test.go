package seat_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// wait bounds every wait for an event in these tests: generous, because the
// package's tests share two cores with the other packages' tests in CI.
const wait = 30 * time.Second

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	_, err := procid.Start(pid)
	return err == nil
}

// waitGone waits until pid no longer runs.
func waitGone(h *seattest.Harness, what string, pid int) {
	h.T.Helper()
	h.WaitFor(fmt.Sprintf("%s (pid %d) to exit", what, pid), wait, func() bool { return !alive(pid) })
}

// procsMentioning lists live processes other than this one whose command line
// contains any of needles, as "pid: cmdline".
func procsMentioning(needles ...string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				out = append(out, fmt.Sprintf("%d: %s", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
				break
			}
		}
	}
	return out
}

// groupMembers lists live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		// f[0] is the state, f[2] the process group.
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// sessionStarts counts the SessionStart hook events the seat has recorded (each
// harness launch fires one; an adopted harness fires none).
func sessionStarts(t *testing.T, s state.Seat) int {
	t.Helper()
	n := 0
	for _, dir := range []string{s.EventsDir(), s.SeenDir()} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-"+hookwire.EvSessionStart+".json") {
				n++
			}
		}
	}
	return n
}

// lastLaunchResumed checks launch.toml: the harness was last launched with
// --resume of session id (never --session-id, which would start afresh).
func lastLaunchResumed(t *testing.T, s state.Seat, id string) {
	t.Helper()
	lf, err := s.LaunchFile().Read()
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(lf.Argv, " ")
	if !strings.Contains(argv, "--resume "+id) || strings.Contains(argv, "--session-id") {
		t.Fatalf("want the harness relaunched with --resume %s, launch.toml argv: %s", id, argv)
	}
}

// tree returns every file and directory under dir with its mode and content, to
// show that a refused command changed nothing.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func diffTrees(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "removed "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "added "+k)
		}
	}
	sort.Strings(d)
	return d
}

func TestBadSeatNamesAreRefusedAndCreateNothing(t *testing.T) {
	t.Parallel()
	h := seattest.Bare(t, "placeholder")
	names := map[string]string{
		"dot-dot-slash":  "../x",
		"upper-space":    "A B",
		"too-long":       strings.Repeat("a", 200),
		"empty":          "",
		"dot":            "a.b",
		"leading-dash":   "-x",
		"slash":          "a/b",
		"leading-under":  "_x",
		"sixty-four":     strings.Repeat("b", 64),
		"trailing-slash": "x/",
	}
	for label, name := range names {
		t.Run(label, func(t *testing.T) {
			runs := [][]string{
				// "--" makes every name a positional argument, "-x" included.
				{"seat", "init", "--harness", "sim", "--workdir", h.Work, "--", name},
				{"seat", "start", "--", name},
				{"seat", "stop", "--", name},
				{"seat", "send", "--", name},
			}
			if !strings.HasPrefix(name, "-") {
				runs = append(runs, []string{"seat", "init", name, "--harness", "sim", "--workdir", h.Work},
					[]string{"seat", "start", name})
			} else {
				// Without "--", a name that looks like a flag is a usage error: also exit 2.
				runs = append(runs, []string{"seat", "start", name})
			}
			for _, args := range runs {
				r := h.Run(args...)
				if r.Code != 2 {
					t.Errorf("pantty %q: want exit 2, got %s", args, r)
				}
				if args[len(args)-2] == "--" && !strings.Contains(r.Stderr, "seat name") {
					t.Errorf("pantty %q: the refusal does not say what is wrong with the seat name: %q", args, r.Stderr)
				}
			}
			if _, err := os.Stat(h.Home); !os.IsNotExist(err) {
				t.Errorf("a refused name created %s (%v): %v", h.Home, err, tree(t, h.Home))
			}
			if ents, _ := os.ReadDir(filepath.Dir(h.Home)); len(ents) != 1 {
				t.Errorf("a refused name created files beside the state root: %v", ents)
			}
			if h.ServerRunning() {
				t.Errorf("a refused name started a tmux server")
			}
		})
	}
	// The longest valid name (63 characters) is accepted: the bound is the rule's, not an accident.
	long := strings.Repeat("c", 63)
	if r := h.Run("seat", "init", long, "--harness", "sim", "--workdir", h.Work); r.Code != 0 {
		t.Fatalf("a 63-character name: %s", r)
	}
}

func TestConcurrentStartsExactlyOneWins(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "race")
	res := h.RunConcurrently([]seattest.Job{{Args: []string{"seat", "start", "race"}}, {Args: []string{"seat", "start", "race"}}})
	// A start of a running seat is done (exit 0, "already running"): the
	// loser names the winner's holder once, with the --takeover that would
	// replace it, and there is never a second driver.
	var won, lost []seattest.Result
	for _, r := range res {
		switch {
		case r.Code == 0 && strings.Contains(r.Stdout, "already running"):
			lost = append(lost, r)
		case r.Code == 0:
			won = append(won, r)
		default:
			t.Errorf("start exited %s", r)
		}
	}
	if len(won) != 1 || len(lost) != 1 {
		t.Fatalf("want one start to win and one to find it running, got %d won, %d already running: %v\ndriver.log:\n%s", len(won), len(lost), res, h.DriverLog())
	}
	o := h.Owner()
	if !o.Live() {
		t.Fatalf("the winner's driver is not live: %+v", o)
	}
	if !strings.Contains(lost[0].Stdout, o.Holder) || !strings.Contains(lost[0].Stdout, "--takeover "+o.Holder) ||
		strings.Count(lost[0].Stdout+lost[0].Stderr, "owned by a live driver") > 1 {
		t.Errorf("the losing start does not name the holder %s once with its --takeover: %s", o.Holder, lost[0])
	}
	if !strings.Contains(won[0].Stdout, o.Holder) {
		t.Errorf("the winning start does not report its holder %s: %q", o.Holder, won[0].Stdout)
	}
	if pids := h.HarnessPIDs(); len(pids) != 1 {
		t.Errorf("want exactly one harness process, got %v", pids)
	}
	if n := sessionStarts(t, h.Seat()); n != 1 {
		t.Errorf("want one harness start, got %d SessionStart events", n)
	}
}

func TestSecondStartIsANoOpAndTakeoverAdopts(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "take")
	h.Start()
	first := h.Owner()
	sess := h.Session()

	r := h.Run("seat", "start", "take")
	if r.Code != 0 || !strings.Contains(r.Stdout, "already running") || !strings.Contains(r.Stdout, first.Holder) {
		t.Fatalf("second start: want exit 0, already running, naming %s, got %s", first.Holder, r)
	}

	r = h.Run("seat", "start", "take", "--takeover", "h-00000000")
	if r.Code != 3 || !strings.Contains(r.Stderr, first.Holder) {
		t.Fatalf("takeover naming the wrong holder: want exit 3 naming %s, got %s", first.Holder, r)
	}
	if o := h.Owner(); o.Holder != first.Holder || !o.Live() {
		t.Fatalf("a wrong takeover disturbed the holder: before %+v, after %+v", first, o)
	}

	r = h.Run("seat", "start", "take", "--takeover", first.Holder)
	if r.Code != 0 {
		t.Fatalf("takeover naming the holder: %s\ndriver.log:\n%s", r, h.DriverLog())
	}
	waitGone(h, "the replaced driver", first.PID)
	second := h.Owner()
	if second.Holder == first.Holder || second.PID == first.PID || !second.Live() {
		t.Fatalf("takeover: want a new live holder, got %+v (was %+v)", second, first)
	}
	if !strings.Contains(r.Stdout, second.Holder) || !strings.Contains(r.Stdout, "adopted") {
		t.Errorf("takeover output should name the new holder and say the harness was adopted: %q", r.Stdout)
	}
	after := h.Session()
	if after.ID != sess.ID || after.PanePID != sess.PanePID || after.PaneID != sess.PaneID || after.Launches != sess.Launches {
		t.Fatalf("takeover must adopt the live harness: before %+v, after %+v", sess, after)
	}
	if pids, want := h.HarnessPIDs(), harnessOf(t, sess.PanePID); len(pids) != 1 || pids[0] != want {
		t.Fatalf("want the one harness pid %d, got %v", want, pids)
	}
	if n := sessionStarts(t, h.Seat()); n != 1 {
		t.Fatalf("an adopted harness is not started again: %d SessionStart events", n)
	}
	// The new driver really drives the adopted harness.
	h.Send("after-takeover", "hello from the new driver")
	h.WaitFinal(wait, "after-takeover")
	if st := h.Status("after-takeover"); st.State != inbox.StateProcessed {
		t.Fatalf("message after takeover: %+v", st)
	}
	if n := h.ModelTurns()["after-takeover"]; n != 1 {
		t.Fatalf("message after takeover reached the model %d times", n)
	}
}

func TestKilledDriverFreesLockAndNewDriverAdoptsPane(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "adopt")
	h.Start()
	h.Send("before", "before the crash")
	h.WaitFinal(wait, "before")
	old := h.Owner()
	sess := h.Session()

	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(h, "the killed driver", old.PID)
	if !alive(sess.PanePID) {
		t.Fatalf("killing the driver killed the harness too")
	}

	r := h.Start()
	o := h.Owner()
	if o.Holder == old.Holder || !o.Live() {
		t.Fatalf("restart after a crash: want a new live holder, got %+v", o)
	}
	if !strings.Contains(r.Stdout, "adopted") {
		t.Errorf("start should say it adopted the live harness: %q", r.Stdout)
	}
	after := h.Session()
	if after.ID != sess.ID || after.PanePID != sess.PanePID || after.Launches != sess.Launches || after.Generation != sess.Generation {
		t.Fatalf("want the live pane adopted on the same session: before %+v, after %+v", sess, after)
	}
	if pids, want := h.HarnessPIDs(), harnessOf(t, sess.PanePID); len(pids) != 1 || pids[0] != want {
		t.Fatalf("want only the adopted harness %d, got %v", want, pids)
	}
	if n := sessionStarts(t, h.Seat()); n != 1 {
		t.Fatalf("a second harness was started: %d SessionStart events", n)
	}

	h.Send("after", "after the crash")
	h.WaitFinal(wait, "after")
	turns := h.ModelTurns()
	if turns["after"] != 1 || turns["before"] != 1 {
		t.Fatalf("each message must reach the model once: %v", turns)
	}
	if st := h.Status("after"); st.State != inbox.StateProcessed || st.SessionID != sess.ID {
		t.Fatalf("message after adoption: %+v", st)
	}
}

func TestCorruptSessionTomlIsReportedNotOverwritten(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "corrupt")
	s := h.Seat()
	garbage := []byte("harness = \"sim\"\nid = \"5b1c0b0e-trunc")
	if err := os.WriteFile(s.SessionPath(), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	r := h.Run("seat", "start", "corrupt")
	if r.Code == 0 {
		t.Fatalf("start over a corrupt session.toml succeeded: %s", r)
	}
	if !strings.Contains(r.Stderr, s.SessionPath()) || !strings.Contains(r.Stderr, "line 2") {
		t.Errorf("the error should name the file and the line: %q", r.Stderr)
	}
	if got, _ := os.ReadFile(s.SessionPath()); !bytes.Equal(got, garbage) {
		t.Fatalf("session.toml was rewritten:\n%q", got)
	}
	if h.ServerRunning() || len(h.HarnessPIDs()) != 0 {
		t.Fatalf("a harness was started on a seat whose session is unknown")
	}
	if _, live, _ := s.LiveOwner(); live {
		t.Fatalf("the driver stayed after failing")
	}
}

func TestTmuxServerKilledSessionRecreatedOnSameSession(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "server")
	h.Start()
	h.Send("m1", "first message")
	h.WaitFinal(wait, "m1")
	o := h.Owner()
	sess := h.Session()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Tmux().KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	// The driver lives on and holds the seat: a start meanwhile changes nothing.
	if r := h.Run("seat", "start", "server"); r.Code != 0 || !strings.Contains(r.Stdout, "already running") || !strings.Contains(r.Stdout, o.Holder) {
		t.Fatalf("start while the driver recreates the server: want exit 0, already running, naming %s, got %s", o.Holder, r)
	}
	s := h.Seat()
	var after state.Session
	h.WaitFor("the driver to relaunch the harness", wait, func() bool {
		v, err := s.SessionFile().Read()
		after = v
		return err == nil && v.Launches > sess.Launches && alive(v.PanePID)
	})
	if after.ID != sess.ID || !after.Resumed || after.Generation != sess.Generation {
		t.Fatalf("want the same session resumed in the same generation: before %+v, after %+v", sess, after)
	}
	lastLaunchResumed(t, s, sess.ID)
	if o2 := h.Owner(); o2.Holder != o.Holder || !o2.Live() {
		t.Fatalf("the driver changed: %+v -> %+v", o, o2)
	}
	h.Send("m2", "second message")
	h.WaitFinal(wait, "m2")
	if st := h.Status("m2"); st.State != inbox.StateProcessed {
		t.Fatalf("m2: %+v", st)
	}
	turns := h.ModelTurns()
	if turns["m1"] != 1 || turns["m2"] != 1 {
		t.Fatalf("model turns: %v", turns)
	}
	// The resumed harness continued the conversation rather than starting afresh.
	for _, rq := range h.Requests() {
		if rq.MsgID() == "m2" && (rq.SessionID != sess.ID || rq.HistoryTurns < 1) {
			t.Fatalf("m2 ran in session %s with %d earlier turns; want %s with the earlier turn", rq.SessionID, rq.HistoryTurns, sess.ID)
		}
	}
	if pids := h.HarnessPIDs(); len(pids) != 1 {
		t.Fatalf("want one harness process, got %v", pids)
	}
}

func TestKilledHarnessIsRespawnedWithResume(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "respawn")
	h.Start()
	h.Send("m1", "first message")
	h.WaitFinal(wait, "m1")
	sess := h.Session()

	if err := syscall.Kill(sess.PanePID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := h.Seat()
	var after state.Session
	h.WaitFor("the harness to be respawned", wait, func() bool {
		v, err := s.SessionFile().Read()
		after = v
		return err == nil && v.Launches > sess.Launches && v.PanePID != sess.PanePID && alive(v.PanePID)
	})
	if after.ID != sess.ID || !after.Resumed || after.Generation != sess.Generation || after.PaneID != sess.PaneID {
		t.Fatalf("want the same pane respawned on the same session: before %+v, after %+v", sess, after)
	}
	lastLaunchResumed(t, s, sess.ID)
	h.Send("m2", "second message")
	h.WaitFinal(wait, "m2")
	if st := h.Status("m2"); st.State != inbox.StateProcessed {
		t.Fatalf("m2: %+v", st)
	}
	for _, rq := range h.Requests() {
		if rq.MsgID() == "m2" && (rq.SessionID != sess.ID || rq.HistoryTurns < 1) {
			t.Fatalf("m2 ran in session %s with %d earlier turns; want %s resumed", rq.SessionID, rq.HistoryTurns, sess.ID)
		}
	}
	if pids, want := h.HarnessPIDs(), harnessOf(t, after.PanePID); len(pids) != 1 || pids[0] != want {
		t.Fatalf("want only the respawned harness %d, got %v", want, pids)
	}
}

// A two-line message queued before start must reach the model as one turn: the
// driver pastes only after SessionStart, when the harness has turned bracketed
// paste on. The control shows the test can fail: the same text typed into a
// harness that is not ready yet is submitted line by line.
func TestNoPasteBeforeHarnessIsReady(t *testing.T) {
	t.Parallel()
	// Not parallel: the control depends on pasting within the simulator's start-up.
	const text = "first line of the message\nsecond line of the message"
	// The simulator takes 4 s to come up: the control's paste must land before
	// that, and under CI's load pasting took 1.24 s from the launch once (with
	// a 1.5 s start-up that left too little room to tell).
	slow := seattest.Env(map[string]string{"PANTTY_SIM_STARTUP": "4s"})

	t.Run("control: raw paste before ready", func(t *testing.T) {
		h := seattest.New(t, "rawpaste", slow)
		s := h.Seat()
		started := make(chan seattest.Result, 1)
		go func() { started <- h.RunEnv(nil, "", "seat", "start", "rawpaste") }()
		var sess state.Session
		h.WaitFor("the pane to exist", wait, func() bool {
			v, err := s.SessionFile().Read()
			sess = v
			return err == nil && v.PaneID != ""
		})
		h.PasteRaw(text)
		if n := sessionStarts(t, s); n != 0 || time.Since(sess.LaunchedAt) > 3*time.Second {
			// The control could not be performed (the machine was too slow to
			// paste before the harness was up): it proves nothing either way.
			t.Skipf("control not performed: the raw paste arrived %s after launch (%d SessionStart events)", time.Since(sess.LaunchedAt), n)
		}
		if r := <-started; r.Code != 0 {
			t.Fatalf("start: %s", r)
		}
		h.WaitFor("the raw lines to reach the model", wait, func() bool {
			n := 0
			for _, rq := range h.Requests() {
				if rq.Kind == "turn" {
					n++
				}
			}
			return n >= 2
		})
		for _, rq := range h.Requests() {
			if strings.Contains(rq.NewInput, "first line") && strings.Contains(rq.NewInput, "second line") {
				t.Fatalf("the control did not split: %q reached the model as one turn", rq.NewInput)
			}
		}
	})

	t.Run("driver waits for SessionStart", func(t *testing.T) {
		h := seattest.New(t, "waitready", slow)
		h.Send("two-lines", text)
		h.Start()
		h.WaitFinal(wait, "two-lines")
		turns := h.Requests()
		if len(turns) != 1 || turns[0].Kind != "turn" || turns[0].MsgID() != "two-lines" ||
			!strings.Contains(turns[0].NewInput, "first line of the message\nsecond line of the message") {
			t.Fatalf("want exactly one model turn carrying both lines, got %+v", turns)
		}
		if st := h.Status("two-lines"); st.State != inbox.StateProcessed {
			t.Fatalf("status: %+v", st)
		}
	})
}

func TestSteeringCommandsRefusedInsideSeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "steer")
	h.Start()
	o := h.Owner()
	sess := h.Session()
	other, err := state.Open(h.Home, "other")
	if err != nil {
		t.Fatal(err)
	}
	if err := seat.InitConfig(other, "sim", h.Work, nil); err != nil {
		t.Fatal(err)
	}
	inside := map[string]string{launch.SeatEnv: "steer"}
	for _, args := range [][]string{
		{"seat", "stop", "steer"},
		{"seat", "command", "steer", "--", "/compact"},
		{"seat", "cancel", "steer"},
		{"seat", "start", "steer", "--takeover", o.Holder},
		{"seat", "send", "other", "--id", "x1"},
	} {
		r := h.RunEnv(inside, "steer me", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "inside") {
			t.Errorf("pantty %q with %s=steer: want exit 2 saying inside a seat, got %s", args, launch.SeatEnv, r)
		}
	}
	if _, err := other.ReadStored("x1"); err == nil {
		t.Errorf("a send from inside seat steer reached seat other")
	}

	// The ancestry check, without the marker: the seat's own shell tool (the
	// simulator's "!" mode runs it as the harness's child) strips the variables
	// and tries to stop its seat.
	out := filepath.Join(h.Work, "stop.out")
	cmd := fmt.Sprintf("!env -u %s -u %s %s --home %s seat stop steer >%s 2>&1; echo rc=$? >>%s",
		launch.SeatEnv, launch.SeatHomeEnv, h.Bin, h.Home, out, out)
	h.PasteRaw(cmd)
	var got []byte
	h.WaitFor("the in-seat stop to finish", wait, func() bool {
		got, _ = os.ReadFile(out)
		return bytes.Contains(got, []byte("rc="))
	})
	if !bytes.Contains(got, []byte("rc=2")) || !bytes.Contains(got, []byte("inside")) {
		t.Errorf("seat stop from the seat's own process tree: want exit 2 saying inside a seat, got %q", got)
	}

	if o2 := h.Owner(); o2.Holder != o.Holder || !o2.Live() {
		t.Fatalf("a refused command disturbed the driver: %+v -> %+v", o, o2)
	}
	if s2 := h.Session(); s2.PanePID != sess.PanePID || !alive(s2.PanePID) {
		t.Fatalf("a refused command disturbed the harness: %+v -> %+v", sess, s2)
	}
	if in, _ := h.Seat().IntentFile().Read(); in.Want != state.IntentRunning {
		t.Fatalf("a refused stop recorded intent %q", in.Want)
	}
}

// harnessOf is the harness under a pane: the pane pid is pantty's pane
// process (paneexec.Run), the harness its child.
func harnessOf(t *testing.T, panePID int) int {
	t.Helper()
	pid, err := proc.HarnessPID(panePID)
	if err != nil {
		t.Fatalf("no harness under pane pid %d: %v", panePID, err)
	}
	return pid
}
