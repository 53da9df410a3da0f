// Command soak runs pantty under faults and counts, from what reached the model,
// that every board message was processed exactly once or visibly failed with a
// reason (docs/reliability.md). scripts/soak.sh builds pantty once and runs it.
//
//	go run ./scripts/soak --bin ./pantty --quick            # ~2 minutes, for CI
//	go run ./scripts/soak --bin ./pantty --duration 30m     # the long form
//	go run ./scripts/soak --bin ./pantty --seed 42 --quick  # replay the same choices
//
// Several seats run on the simulated harness, each on its own private tmux
// server, under a private PANTTY_HOME in a temporary directory. Concurrent
// senders store a steady stream of messages with real `pantty seat send`
// processes; a seeded injector kills and stops drivers, harnesses, hooks and
// tmux servers, sends messages the provider refuses, compacts, stops and starts
// seats and starts them twice; `pantty recover` runs every few seconds in the
// background. At the end everything settles (recover until every seat is ok and
// every message final), then the request logs of the simulators are counted
// against the senders' own lists. Exit 0 only when nothing was lost, nothing
// processed twice, nothing stuck, every seat kept its session, and nothing was
// left running.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

func main() { os.Exit(run()) }

func run() int {
	var (
		quick    = flag.Bool("quick", false, "the CI form: 3 seats, about 80s of traffic and faults, under 5 minutes in all")
		duration = flag.Duration("duration", 10*time.Minute, "how long senders and faults run (the long form)")
		seats    = flag.Int("seats", 4, "seats")
		senders  = flag.Int("senders", 3, "concurrent senders")
		maxMsgs  = flag.Int("messages", 100000, "stop sending after this many messages")
		seed     = flag.Int64("seed", 0, "seed of every random choice (0: from the clock; printed)")
		bin      = flag.String("bin", "", "the pantty binary (default: build ./cmd/pantty into the soak's directory)")
		keep     = flag.Bool("keep", false, "keep the soak's directory (state, logs) for inspection")
		quiet    = flag.Bool("quiet", false, "print only the summary")
	)
	flag.Parse()
	settleLimit := 5 * time.Minute
	faultGap := [2]int{2000, 6000}
	if *quick {
		*duration, *seats, *senders = 80*time.Second, 3, 3
		settleLimit = 2 * time.Minute
		faultGap = [2]int{1500, 3500}
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano() % 1_000_000_000
	}
	root, err := os.MkdirTemp("", "psoak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 1
	}
	root, _ = filepath.EvalSymlinks(root)
	w := &world{root: root, log: newLogger(root, *quiet)}
	fmt.Printf("soak: seed %d (replay the same choices with --seed %d); %d seats, %d senders, %s; root %s\n",
		*seed, *seed, *seats, *senders, *duration, root)
	code := 1
	defer func() {
		if !*keep && code == 0 {
			os.RemoveAll(root)
		} else {
			fmt.Printf("soak: state kept in %s (soak.log; the drivers' logs in driver-logs/ when the state root was a tmpfs, else home/seats/*/driver.log)\n", root)
		}
	}()
	if *bin == "" {
		*bin = filepath.Join(root, "pantty")
		out, err := exec.Command("go", "build", "-o", *bin, "./cmd/pantty").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "soak: go build: %v\n%s", err, out)
			return 1
		}
	}
	w.bin, _ = filepath.Abs(*bin)
	code = w.soak(*seed, *seats, *senders, *maxMsgs, *duration, settleLimit, faultGap)
	if code != 0 && *quiet {
		// CI runs it quiet: a failure still shows what happened.
		if b, err := os.ReadFile(filepath.Join(root, "soak.log")); err == nil {
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			fmt.Printf("\nsoak: the last lines of soak.log:\n%s\n", strings.Join(lines[max(0, len(lines)-60):], "\n"))
		}
	}
	return code
}

func (w *world) soak(seed int64, nSeats, nSenders, maxMsgs int, duration, settleLimit time.Duration, faultGap [2]int) int {
	master := rand.New(rand.NewSource(seed))
	simEnv := map[string]string{"PANTTY_SIM_STARTUP": "100ms", "PANTTY_SIM_COMMIT": "10ms", "PANTTY_SIM_TURN": "150ms"}
	if err := w.setup(nSeats, simEnv); err != nil {
		fmt.Fprintln(os.Stderr, "soak: setup:", err)
		return 1
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	for _, r := range w.seats {
		if res := w.pantty(time.Minute, "", "seat", "start", r.name); res.code != 0 {
			fmt.Fprintf(os.Stderr, "soak: first start of %s: %s\n", r.name, res)
			w.teardown()
			return 1
		}
		sess, err := w.seat(r).SessionFile().Read()
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			w.teardown()
			return 1
		}
		r.session = sess.ID
		w.log.printf("%s started on session %s (tmux %s)", r.name, sess.ID, r.socket)
	}
	steering := w.steeringDrill()

	l := &ledger{}
	fl := &faultLog{}
	rl := &recoverLog{}
	stop := make(chan struct{})
	var senders, faults sync.WaitGroup
	quota := maxMsgs / nSenders
	for j := 1; j <= nSenders; j++ {
		rng := rand.New(rand.NewSource(master.Int63()))
		senders.Add(1)
		go func() {
			defer senders.Done()
			w.sender(j, rng, stop, func(r *rand.Rand) time.Duration { return time.Duration(250+r.Intn(700)) * time.Millisecond }, quota, l)
		}()
	}
	injRNG := rand.New(rand.NewSource(master.Int63()))
	cronRNG := rand.New(rand.NewSource(master.Int63()))
	var injecting, scheduling sync.WaitGroup
	injecting.Add(1)
	go func() {
		defer injecting.Done()
		w.injector(injRNG, stop, func(r *rand.Rand) time.Duration {
			return time.Duration(faultGap[0]+r.Intn(faultGap[1]-faultGap[0])) * time.Millisecond
		}, l, fl, &faults)
	}()
	// The scheduler outlives the traffic: a fault injected just before the end
	// (a killed driver) is revived only by recover, so cron stops after the
	// faults in progress have been measured, not with the senders.
	cronStop := make(chan struct{})
	scheduling.Add(1)
	go func() { defer scheduling.Done(); w.cron(cronRNG, cronStop, rl) }()

	time.Sleep(duration)
	close(stop)
	senders.Wait()
	injecting.Wait()
	w.log.printf("traffic stopped: %d messages stored; waiting for the faults in progress", l.count())
	faults.Wait()
	close(cronStop)
	scheduling.Wait()

	// Settle: every seat meant to run, recover until all are ok and every
	// message is final.
	settled, settleTook, settleWhy := w.settle(l, rl, settleLimit)
	if !settled {
		bad("did not settle within %s: %s", settleLimit, settleWhy)
	}
	view, err := w.readModelView()
	if err != nil {
		bad("reading what reached the model: %v", err)
	}
	v := w.judge(l, view)
	modes := walkModes(w.home)
	canaries := w.canaries()
	left := w.teardown()

	// The figures.
	fmt.Println()
	fmt.Println("soak: figures")
	fmt.Printf("  seed                 %d\n", seed)
	l.mu.Lock()
	fmt.Printf("  messages             %d stored by %d sends (%d refused at the door, for want of room in the state root); %s\n", len(l.sent), l.attempts, len(l.refused), kindsOf(l.sent))
	l.mu.Unlock()
	fmt.Printf("  processed            %d exactly once, %d after one marked resubmission of a crashed turn\n", v.processedOnce, v.processedResubmit)
	fmt.Printf("  failed (visibly)     %d %s\n", sumOf(v.failed), mapString(v.failed))
	fmt.Printf("  provider refusals    %d refused turns at the model (not processing)\n", v.refusedTurns)
	fmt.Printf("  losses               %d\n", len(v.lost))
	fmt.Printf("  duplicates           %d\n", len(v.duplicates))
	fmt.Printf("  stuck                %d\n", len(v.stuck))
	fmt.Printf("  failed but ran       %d (failed status although the model completed a turn for it)\n", len(v.failedButRan))
	fl.mu.Lock()
	byKind := map[string][]*faultRec{}
	for _, f := range fl.recs {
		byKind[f.kind] = append(byKind[f.kind], f)
	}
	fl.mu.Unlock()
	fmt.Printf("  faults               %d chosen, %d delivered\n", len(fl.recs), delivered(fl.recs))
	var allRev durations
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		var revs durations
		done, notRevived := 0, 0
		for _, f := range byKind[k] {
			if f.done {
				done++
			}
			if f.measured && f.revived {
				revs = append(revs, f.revival)
			}
			if f.measured && !f.revived {
				notRevived++
				bad("%s on %s at %s: not revived within %s: %s", f.kind, f.seat, f.at.Format("15:04:05"), revivalLimit, f.note)
			}
			if f.violation != "" {
				bad("%s on %s at %s: %s", f.kind, f.seat, f.at.Format("15:04:05"), f.violation)
			}
		}
		allRev = append(allRev, revs...)
		fmt.Printf("    %-14s %3d delivered of %3d; revival %s\n", k, done, len(byKind[k]), revs.stats())
	}
	rl.mu.Lock()
	runs, acted, verified, busy := len(rl.runs), 0, 0, 0
	codes := map[int]int{}
	causes := map[string]int{}
	for _, r := range rl.runs {
		codes[r.code]++
		if r.busy {
			busy++
		}
		for _, a := range r.acts {
			if a.verdict == "dead" && a.action != "" && !strings.HasPrefix(a.action, "none") {
				acted++
				causes[a.cause]++
				if strings.HasPrefix(a.result, "verified") {
					verified++
				}
			}
		}
	}
	rl.mu.Unlock()
	fmt.Printf("  recover runs         %d in the background (exit codes %s, %d found another run sweeping)\n", runs, intMapString(codes), busy)
	fmt.Printf("  recoveries           %d acted on by recover (%s), %d verified by its own re-probe\n", acted, mapString(causes), verified)
	fmt.Printf("  revival              %d revivals measured after faults: %s\n", len(allRev), allRev.stats())
	fmt.Printf("  settle               %s\n", settleTook.Round(100*time.Millisecond))
	fmt.Printf("  sessions             %d seats, %d changed\n", len(w.seats), len(v.sessionsChanged))
	fmt.Printf("  steering from inside %d of %d refused with exit 2, seats untouched\n", steering.refused, steering.tried)
	fmt.Printf("  dispatch canaries    %d hostile messages, %d canary files, %d compactions at the model (faults asked for them)\n", countKind(l, "hazard"), canaries, view.compacts)
	fmt.Printf("  file modes           %d files and %d directories under the home, %d not 0600/0700, %d symlinks\n", modes.files, modes.dirs, len(modes.bad), len(modes.symlinks))
	fmt.Printf("  left running         %d processes after the seats were stopped\n", len(left))

	for _, x := range l.refused {
		// A full state root (the state-full fault) is the one reason the
		// door may refuse a valid text: exit 1 naming the disk, nothing stored.
		if !strings.Contains(x, "exit 1:") || !strings.Contains(x, "no space left on device") {
			bad("SEND FAILED %s (every text the soak sends is valid: the door must store it)", x)
		}
	}
	for _, x := range v.lost {
		bad("LOST %s", x)
	}
	for _, x := range v.duplicates {
		bad("DUPLICATE %s", x)
	}
	for _, x := range v.stuck {
		bad("STUCK %s", x)
	}
	for _, x := range v.misrouted {
		bad("MISROUTED %s", x)
	}
	for _, x := range v.sessionsChanged {
		bad("SESSION %s", x)
	}
	for _, x := range v.foreign {
		bad("FOREIGN %s", x)
	}
	for _, x := range left {
		bad("LEFT RUNNING %s", x)
	}
	for _, x := range modes.bad {
		bad("MODE %s", x)
	}
	for _, x := range modes.symlinks {
		bad("SYMLINK %s", x)
	}
	if canaries > 0 {
		bad("a board message dispatched: %d canary files in the workdirs", canaries)
	}
	if steering.refused != steering.tried {
		bad("steering from inside a seat: %s", strings.Join(steering.problems, "; "))
	}
	for _, x := range v.failedButRan {
		w.log.printf("note: %s", x)
	}
	if len(v.failedButRan) > 0 {
		fmt.Printf("\nsoak: %d message(s) failed although their turn completed (visible, not lost; see soak.log)\n", len(v.failedButRan))
	}
	if len(problems) > 0 {
		fmt.Printf("\nsoak: FAILED (seed %d):\n", seed)
		for _, p := range problems {
			fmt.Println("  - " + p)
		}
		return 1
	}
	fmt.Printf("\nsoak: OK (seed %d)\n", seed)
	return 0
}

// settle brings every seat back to running and ok, and waits until every
// message is final, running recover like the scheduler would.
func (w *world) settle(l *ledger, rl *recoverLog, limit time.Duration) (bool, time.Duration, string) {
	start := time.Now()
	// SIGCONT anything a fault left stopped (faults have finished; this is belt
	// and braces), and start any seat a stop/start fault left stopped.
	for _, p := range processes(w.root) {
		syscall.Kill(p.pid, syscall.SIGCONT)
	}
	for _, r := range w.seats {
		if in, err := w.seat(r).IntentFile().Read(); err == nil && in.Want != state.IntentRunning {
			res := w.pantty(time.Minute, "", "seat", "start", r.name)
			w.log.printf("settle: %s was left stopped; start: %s", r.name, res)
		}
	}
	why := ""
	for time.Since(start) < limit {
		run := w.recoverOnce()
		rl.mu.Lock()
		rl.runs = append(rl.runs, run)
		rl.mu.Unlock()
		allOK := run.error == "" && !run.busy && len(run.acts) == len(w.seats)
		for _, a := range run.acts {
			if a.verdict != "ok" {
				allOK = false
				why = fmt.Sprintf("%s is %s (%s): %s", a.seat, a.verdict, a.cause, a.action)
			}
		}
		if run.error != "" {
			why = run.error
		}
		pending := w.pending(l)
		if allOK && len(pending) == 0 {
			w.log.printf("settled in %s", time.Since(start).Round(100*time.Millisecond))
			return true, time.Since(start), ""
		}
		if len(pending) > 0 {
			why = fmt.Sprintf("%d message(s) not final, e.g. %s", len(pending), pending[0])
		}
		time.Sleep(2 * time.Second)
	}
	return false, time.Since(start), why
}

// pending lists sent messages that are not final yet.
func (w *world) pending(l *ledger) []string {
	l.mu.Lock()
	sent := append([]sentMsg{}, l.sent...)
	l.mu.Unlock()
	var out []string
	for _, m := range sent {
		s, _ := state.Open(w.home, m.seat)
		st, err := s.ReadStatus(m.id)
		if err != nil || !inbox.Final(st.State) {
			out = append(out, fmt.Sprintf("%s on %s (%s %s)", m.id, m.seat, st.State, st.Reason))
		}
	}
	return out
}

// teardown stops every seat and reports whatever is still running under the
// soak's root afterwards (then kills it, so nothing outlives the soak).
func (w *world) teardown() []string {
	for _, r := range w.seats {
		if res := w.pantty(time.Minute, "", "seat", "stop", r.name); res.code != 0 {
			w.log.printf("teardown: seat stop %s: %s", r.name, res)
		}
	}
	var left []liveProc
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if left = processes(w.root); len(left) == 0 {
			break
		}
	}
	var out []string
	for _, p := range left {
		out = append(out, fmt.Sprintf("pid %d: %s", p.pid, strings.Join(p.argv, " ")))
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	w.unmount()
	return out
}

// steering is the in-seat refusal drill: the steering commands run as if from
// inside a seat (its environment marker) must all be refused with exit 2, and
// the seats must stay as they were.
type steering struct {
	tried, refused int
	problems       []string
}

func (w *world) steeringDrill() steering {
	var st steering
	if len(w.seats) < 2 {
		return st
	}
	self, other := w.seats[0].name, w.seats[1].name
	cmds := [][]string{
		{"seat", "stop", other}, {"seat", "stop", self},
		{"seat", "command", other, "--", "/compact"}, {"seat", "command", self, "--", "/clear"},
		{"seat", "cancel", other}, {"seat", "compact", other},
		{"seat", "start", other, "--takeover", "h-anything"},
		{"seat", "send", other, "--id", "from-inside-1"},
	}
	env := w.env
	w.env = append(append([]string{}, env...), "PANTTY_SEAT="+self)
	defer func() { w.env = env }()
	for _, c := range cmds {
		st.tried++
		res := w.pantty(30*time.Second, "an order from inside", c...)
		if res.code == 2 {
			st.refused++
		} else {
			st.problems = append(st.problems, fmt.Sprintf("%s: %s", strings.Join(c, " "), res))
		}
	}
	w.env = env
	for _, r := range w.seats[:2] {
		if ok, why := w.revived(r, time.Now().Add(-5*time.Second)); !ok {
			st.problems = append(st.problems, r.name+" changed: "+why)
			st.refused--
		}
	}
	return st
}

// canaries counts files a dispatched `!touch canary-…` would have made.
func (w *world) canaries() int {
	n := 0
	for _, r := range w.seats {
		m, _ := filepath.Glob(filepath.Join(r.work, "canary-*"))
		n += len(m)
	}
	return n
}

func kindsOf(sent []sentMsg) string {
	m := map[string]int{}
	for _, s := range sent {
		m[s.kind]++
	}
	return mapString(m)
}

func countKind(l *ledger, kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.sent {
		if s.kind == kind {
			n++
		}
	}
	return n
}

func delivered(recs []*faultRec) int {
	n := 0
	for _, f := range recs {
		if f.done {
			n++
		}
	}
	return n
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func mapString(m map[string]int) string {
	if len(m) == 0 {
		return "(none)"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func intMapString(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%d", m[k], k))
	}
	return strings.Join(parts, ", ")
}
