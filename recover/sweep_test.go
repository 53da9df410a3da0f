package recover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/procid"
	"github.com/pantty/pantty/recover"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// A healthy seat costs nothing: 100 sweeps over two healthy seats on one tmux
// server send no signal, write nothing to tmux (every tmux call is the one
// list-panes per sweep, counted by a tmux wrapper first in PATH) and change no
// file but the recorded verdict; the drivers and harnesses are the same
// processes afterwards.
func TestHealthySeatCostsNothing(t *testing.T) {
	t.Parallel()
	// The simulator, like Claude Code, fires an idle Notification after 60 s
	// with nothing to do: the harness's own event, not recover's doing. 100
	// sweeps on a loaded machine can take longer than that (72 s seen on a
	// fresh CI machine), so the seats' harnesses are told to stay quiet.
	quiet := map[string]string{"PANTTY_SIM_IDLE": "24h"}
	for k, v := range seattest.FastSim {
		quiet[k] = v
	}
	h := seattest.New(t, "healthy", seattest.TOML(fast...), seattest.Env(quiet))
	b := siblingEnv(t, h, "healthy2", quiet)
	h.Start()
	b.Start()
	h.Send("m1", "one turn")
	b.Send("n1", "one turn")
	exactlyOnce(t, h, "m1")
	exactlyOnce(t, b, "n1")

	realTmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal(err)
	}
	binDir := filepath.Dir(writeScript(t, "tmux", ""))
	calls := filepath.Join(binDir, "calls.log")
	tmuxtest.WriteExecutable(filepath.Join(binDir, "tmux"), []byte(fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %s\nexec %s \"$@\"\n", calls, realTmux)))
	env := map[string]string{"PATH": binDir + ":" + os.Getenv("PATH")}

	// Everything but the verdict (health.toml), the drivers' own beats
	// (heartbeat.toml), recover's own global records and temp files.
	skip := func(rel string) bool {
		switch filepath.Base(rel) {
		case "health.toml", "heartbeat.toml", "recover-last.toml", "recover-owner.toml", "recover.lock":
			return true
		}
		return strings.HasPrefix(rel, "tmp/") || strings.Contains(rel, "/tmp/")
	}
	type procs struct {
		owners [2]state.Owner
		panes  string
	}
	state := func() procs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, realTmux, "-S", h.Socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_pid} #{pane_dead} #{session_name} #{history_size}").Output()
		if err != nil {
			t.Fatal(err)
		}
		return procs{owners: [2]state.Owner{h.Owner(), b.Owner()}, panes: string(out)}
	}
	// Let both seats settle (the last turn's status line and context reading
	// arrive after its Stop): two snapshots a beat apart must agree.
	var before map[string]string
	h.WaitFor("the seats' files to settle", wait, func() bool {
		a := snapshot(t, h.Home, skip)
		time.Sleep(500 * time.Millisecond)
		before = snapshot(t, h.Home, skip)
		return len(diff(a, before)) == 0
	})
	procsBefore := state()

	const sweeps = 100
	var took int64
	for i := 0; i < sweeps; i++ {
		r := h.RunEnv(env, "", "recover", "--json")
		var rep recover.Report
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 {
			t.Fatalf("sweep %d: %s", i, r)
		}
		for _, s := range rep.Seats {
			if s.Verdict != recover.OK || s.Action != "" {
				t.Fatalf("sweep %d: %+v", i, s)
			}
		}
		if rep.TmuxCalls != 1 {
			t.Fatalf("sweep %d made %d tmux calls, want 1 for two seats on one socket", i, rep.TmuxCalls)
		}
		took += rep.TookMS
	}
	after, procsAfter := snapshot(t, h.Home, skip), state()
	if d := diff(before, after); len(d) > 0 {
		t.Fatalf("100 sweeps of healthy seats changed files: %v", d)
	}
	if procsAfter != procsBefore {
		t.Fatalf("processes or panes changed:\nbefore %+v\nafter  %+v", procsBefore, procsAfter)
	}
	for _, o := range procsAfter.owners {
		if !o.Live() {
			t.Fatalf("driver %s is not live", o)
		}
	}
	log := strings.Split(strings.TrimSpace(read(t, calls)), "\n")
	if len(log) != sweeps {
		t.Fatalf("%d tmux calls for %d sweeps", len(log), sweeps)
	}
	for _, l := range log {
		if !strings.Contains(l, " list-panes -a ") {
			t.Fatalf("a sweep of healthy seats ran tmux %q", l)
		}
	}
	t.Logf("%d sweeps of 2 healthy seats: mean %.1f ms per sweep (in-process timing), 1 tmux call each", sweeps, float64(took)/sweeps)
}

// Two recover runs at once on a seat whose driver died: both exit 0, exactly
// one starts a driver (the other finds the lock taken, or the seat already
// revived), and the seat ends with one driver and one harness.
func TestTwoRunsAtOnce(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "twice")
	h.Start()
	o := h.Owner()
	syscall.Kill(o.PID, syscall.SIGKILL)
	h.WaitFor("the driver to die", wait, func() bool { return !alive(o.PID) })
	job := seattest.Job{Args: []string{"recover", "--json"}}
	res := h.RunConcurrently([]seattest.Job{job, job})
	started, busy := 0, 0
	for i, r := range res {
		var rep recover.Report
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 {
			t.Fatalf("run %d: %s", i, r)
		}
		if rep.Busy != "" {
			busy++
		}
		for _, s := range rep.Seats {
			if strings.Contains(s.Action, "started driver") {
				started++
			}
		}
	}
	if started != 1 {
		t.Fatalf("%d runs started a driver (%d found the lock busy): want exactly one\n%s\n%s", started, busy, res[0], res[1])
	}
	if n := h.HarnessPIDs(); len(n) != 1 {
		t.Fatalf("%d harnesses run for the seat", len(n))
	}
	if o2 := h.Owner(); !o2.Live() || o2.Holder == o.Holder {
		t.Fatalf("owner after: %s", o2)
	}
}

// A second run while one is sweeping exits 0 and says so; a lock held longer
// than five intervals makes the run exit 4 naming the stuck holder.
func TestSweepLock(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "locked")
	fl := flock.New(filepath.Join(h.Home, "recover.lock"))
	if ok, err := fl.TryLock(); err != nil || !ok {
		t.Fatalf("lock: %v", err)
	}
	defer fl.Unlock()
	start, _ := procid.Start(os.Getpid())
	holder := recover.Holder{PID: os.Getpid(), PIDStart: start, Host: "here", Started: time.Now().UTC()}
	write := func() {
		if err := fsatomic.WriteState(state.HomeTmpDir(h.Home), filepath.Join(h.Home, "recover-owner.toml"), holder); err != nil {
			t.Fatal(err)
		}
	}
	write()
	r := h.Run("recover")
	if r.Code != 0 || !strings.Contains(r.Stdout, "another run is sweeping") || !strings.Contains(r.Stdout, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("while another run sweeps: %s", r)
	}
	holder.Started = time.Now().Add(-time.Hour).UTC()
	write()
	r = h.Run("recover")
	if r.Code != 4 || !strings.Contains(r.Stderr, fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(r.Stderr, "held for") {
		t.Fatalf("with a stuck holder: %s", r)
	}
	// The scheduler's interval sets "stuck": an hour is not stuck at --interval 15m.
	if r := h.Run("recover", "--interval", "15m"); r.Code != 0 {
		t.Fatalf("an hour-old holder at a 15m interval: %s", r)
	}
}

// The finalizer: `seat done` leaves cleanup.toml; recover verifies the
// workdir (clean, nothing unpushed), leaving the marker with the reason while a
// check fails and retrying each sweep; once it passes, the seat is stopped and
// the marker removed; a stopped seat is then left alone.
func TestFinalizer(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "fin")
	remote := filepath.Join(t.TempDir(), "remote.git")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(filepath.Dir(remote), "init", "--bare", remote)
	git(h.Work, "init")
	os.WriteFile(filepath.Join(h.Work, "README"), []byte("work\n"), 0o644)
	git(h.Work, "add", "README")
	git(h.Work, "commit", "-m", "first")
	git(h.Work, "remote", "add", "origin", remote)
	git(h.Work, "push", "-u", "origin", "HEAD")
	h.Start()
	s := h.Seat()

	if r := h.RunEnv(map[string]string{launch.SeatEnv: "someone-else"}, "", "seat", "done", "fin"); r.Code != 2 {
		t.Fatalf("done from inside another seat: %s", r)
	}
	if r := h.Run("seat", "done", "fin"); r.Code != 0 {
		t.Fatalf("seat done: %s", r)
	}
	cleanup := func() recover.CleanupReport {
		t.Helper()
		rep, _ := sweep(t, h)
		if len(rep.Cleanups) != 1 {
			t.Fatalf("cleanups: %+v", rep.Cleanups)
		}
		return rep.Cleanups[0]
	}
	os.WriteFile(filepath.Join(h.Work, "notes.txt"), []byte("not committed\n"), 0o644)
	if c := cleanup(); c.State != "pending" || !strings.Contains(c.Reason, "git-clean") || !strings.Contains(c.Reason, "notes.txt") {
		t.Fatalf("dirty workdir: %+v", c)
	}
	if m, err := s.CleanupFile().Read(); err != nil || m.Attempts != 1 || !strings.Contains(m.LastError, "notes.txt") {
		t.Fatalf("marker after a failed check: %+v %v", m, err)
	}
	if !h.Owner().Live() {
		t.Fatal("the seat was stopped although its workdir is dirty")
	}
	git(h.Work, "add", "notes.txt")
	git(h.Work, "commit", "-m", "notes")
	if c := cleanup(); c.State != "pending" || !strings.Contains(c.Reason, "1 unpushed commit") || c.Attempts != 2 {
		t.Fatalf("unpushed commit: %+v", c)
	}
	git(h.Work, "push")
	if c := cleanup(); c.State != "done" {
		t.Fatalf("clean and pushed: %+v", c)
	}
	if _, err := s.CleanupFile().Read(); err == nil {
		t.Fatal("the marker is still there")
	}
	if in, err := s.IntentFile().Read(); err != nil || in.Want != state.IntentStopped {
		t.Fatalf("intent after the finalizer: %+v %v", in, err)
	}
	if _, live, _ := s.LiveOwner(); live || h.ServerRunning() && len(h.HarnessPIDs()) > 0 {
		t.Fatal("the seat still runs after the finalizer")
	}
	rep, res := sweep(t, h)
	if r := seatIn(t, rep, "fin"); r.Verdict != "" || !strings.Contains(r.Reason, "left alone") || res.Code != 0 || len(rep.Cleanups) != 0 {
		t.Fatalf("a finished seat: %+v (exit %d)", r, res.Code)
	}
}

// The sweep's clock is injected: the same seat read at a later time has an
// expired provider block and a stale heartbeat (a dry run, in process: the
// verdicts change, nothing is done).
func TestSweepClockIsInjected(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "clock")
	h.Start()
	now := time.Now()
	if err := outage.RecordBlock(h.Home, "sim", state.Block{Until: now.Add(10 * time.Minute), Since: now, Error: "rate_limit", Seat: "clock"}, now); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) recover.SeatReport {
		t.Helper()
		rep, err := recover.Sweep(recover.Options{Home: h.Home, DryRun: true, Now: func() time.Time { return now.Add(d) }})
		if err != nil {
			t.Fatal(err)
		}
		return seatIn(t, rep, "clock")
	}
	if r := at(0); r.Verdict != recover.OK || !strings.Contains(r.Waiting, "provider sim") {
		t.Fatalf("now: %+v", r)
	}
	if r := at(11 * time.Minute); r.Waiting != "" || r.Verdict != recover.Dead || r.Cause != recover.CauseWedged || !strings.Contains(r.Result, "dry run") {
		t.Fatalf("eleven minutes later: %+v", r)
	}
	if !h.Owner().Live() {
		t.Fatal("a dry run acted")
	}
}

// --textfile writes the seats' readings for node_exporter after the sweep,
// with recover's verdict in them.
func TestTextfile(t *testing.T) {
	t.Parallel()
	h := newSeat(t, "prom")
	h.Start()
	path := filepath.Join(t.TempDir(), "pantty.prom")
	if r := h.Run("recover", "--textfile", path); r.Code != 0 {
		t.Fatalf("recover --textfile: %s", r)
	}
	if text := read(t, path); !strings.Contains(text, `pantty_seat_health{`) || !strings.Contains(text, `verdict="ok"`) {
		t.Fatalf("textfile:\n%s", text)
	}
}
