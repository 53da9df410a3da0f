package seat_test

// Exactly once under load and under driver kills, counted from what reached the
// model (the simulator's request log, each turn's new input keyed by message id)
// against the senders' own lists — never from pantty's status files.

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// loadTOML makes a bulk seat quick: the simulator commits a paste in 10ms
// (seattest.FastSim), so a 20ms settle before Enter is enough, and a missing
// UserPromptSubmit is retried after 1s instead of 5s.
var loadTOML = seattest.TOML(`paste_settle = "20ms"`, `submit_timeout = "1s"`)

// modelOrder lists the message ids of the model turns in the order the model
// got them, and fails on a turn without a guard header.
func modelOrder(t *testing.T, h *seattest.Harness) []string {
	t.Helper()
	var ids []string
	for _, r := range h.Requests() {
		if r.Kind != "turn" {
			t.Errorf("request-log row of kind %q: %q", r.Kind, r.NewInput)
			continue
		}
		id := r.MsgID()
		if id == "" {
			t.Errorf("a turn without a guard header reached the model: %q", r.NewInput)
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// checkExactlyOnce compares the model's turns with the senders' lists: every
// sent id exactly once, nothing else, and each sender's ids in its own order.
func checkExactlyOnce(t *testing.T, got []string, senders [][]string) {
	t.Helper()
	pos := map[string]int{}
	for i, id := range got {
		if _, dup := pos[id]; dup {
			t.Errorf("message %s reached the model more than once", id)
		}
		pos[id] = i
	}
	total := 0
	for s, ids := range senders {
		total += len(ids)
		last := -1
		for _, id := range ids {
			p, ok := pos[id]
			if !ok {
				t.Errorf("sender %d: message %s never reached the model", s, id)
				continue
			}
			if p < last {
				t.Errorf("sender %d: message %s reached the model before an earlier message of the same sender", s, id)
			}
			last = p
		}
	}
	if len(pos) != total {
		t.Errorf("the model got %d distinct messages, the senders sent %d", len(pos), total)
	}
}

// waitAllClosed waits until cursor.toml counts n messages as closed, which
// means every message is final. It fails when no message has closed for stall:
// a queue that stopped moving, not a slow machine. How long the whole queue
// takes is throughput, a benchmark's business (scripts/bench.sh): under CI, with
// the real harnesses' suites beside it, the same 200 messages took 1.2 s each
// where they take 0.17 s alone. It reads one file per wake-up, where WaitFinal
// would read every status file: with hundreds of messages that reading would
// compete for the CPU with the seat under test.
func waitAllClosed(h *seattest.Harness, n int, stall time.Duration) {
	h.T.Helper()
	closed := func() int {
		c, err := h.Seat().CursorFile().Read()
		if err != nil {
			return -1
		}
		return c.Closed
	}
	for last := closed(); last != n; last = closed() {
		h.WaitFor(fmt.Sprintf("cursor.toml to close one more message (%d of %d closed)", max(last, 0), n), stall, func() bool {
			c := closed()
			return c > last || c == n
		})
	}
}

// checkCursorAtEnd: cursor.toml names the last message in queue order and
// counts every message as closed.
func checkCursorAtEnd(t *testing.T, h *seattest.Harness, n int) {
	t.Helper()
	es, err := h.Seat().Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n {
		t.Fatalf("inbox holds %d messages, want %d", len(es), n)
	}
	waitCursor(h, es[len(es)-1].Msg.ID, n)
}

func TestConcurrentSendersEachMessageOnceInOrder(t *testing.T) {
	t.Parallel()
	perSender := 50
	if testing.Short() {
		perSender = 10
	}
	const nSenders = 4
	h := seattest.New(t, "load", loadTOML)
	h.Start()
	start := time.Now()
	senders := make([][]string, nSenders)
	jobs := make([]seattest.Job, nSenders)
	var all []string
	for s := range nSenders {
		var in strings.Builder
		for i := range perSender {
			id := fmt.Sprintf("s%d-%03d", s, i)
			senders[s] = append(senders[s], id)
			fmt.Fprintf(&in, `{"id":%q,"from":"sender%d","text":"message %d of sender %d"}`+"\n", id, s, i, s)
		}
		all = append(all, senders[s]...)
		jobs[s] = seattest.Job{Stdin: in.String(), Args: []string{"seat", "send", "load", "--jsonl"}}
	}
	for i, r := range h.RunConcurrently(jobs) {
		if r.Code != 0 {
			t.Fatalf("sender %d: %s", i, r)
		}
	}
	waitAllClosed(h, len(all), time.Minute)
	t.Logf("%d messages from %d concurrent senders processed in %s", len(all), nSenders, time.Since(start).Round(time.Millisecond))
	checkExactlyOnce(t, modelOrder(t, h), senders)
	for _, id := range all {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			// A rare failure under CI's full load (one s2-004 failed
			// undelivered, never at the model, 2026-12-06; not reproduced
			// alone or under three CPU hogs): keep what the driver saw.
			t.Errorf("message %s ended %s (%s: %s); driver.log on it:\n%s", id, st.State, st.Reason, st.Detail, linesWith(h.DriverLog(), id))
		}
	}
	checkCursorAtEnd(t, h, len(all))
}

// TestDriverKilledAtRandomPointsStillExactlyOnce kills the driver with SIGKILL
// at random moments while it works through a queue, and restarts it with `seat
// start`, which adopts the live harness. The seed is printed: a failure can be
// replayed with PANTTY_TEST_SEED.
func TestDriverKilledAtRandomPointsStillExactlyOnce(t *testing.T) {
	t.Parallel()
	n, kills := 50, 8
	if testing.Short() {
		n, kills = 20, 4
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("PANTTY_TEST_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	t.Logf("seed %d (PANTTY_TEST_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewSource(seed))

	h := seattest.New(t, "kills", loadTOML)
	h.Start()
	var ids []string
	var in strings.Builder
	for i := range n {
		id := fmt.Sprintf("k%03d", i)
		ids = append(ids, id)
		fmt.Fprintf(&in, `{"id":%q,"text":"message %d"}`+"\n", id, i)
	}
	if r := h.RunStdin(in.String(), "seat", "send", "kills", "--jsonl"); r.Code != 0 {
		t.Fatalf("send: %s", r)
	}
	start := time.Now()
	for k := range kills {
		// A random moment in the next stretch of work: a message takes ~60-100ms.
		time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
		o := h.Owner()
		if err := syscall.Kill(o.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %d: driver pid %d: %v", k, o.PID, err)
		}
		h.WaitFor("the killed driver to be gone", 10*time.Second, func() bool { return !o.Live() })
		r := h.Start()
		if !strings.Contains(r.Stdout, "adopted its live harness") {
			t.Fatalf("restart %d did not adopt the live harness: %s", k, r)
		}
	}
	waitAllClosed(h, n, time.Minute)
	t.Logf("%d messages through %d driver kills in %s", n, kills, time.Since(start).Round(time.Millisecond))
	checkExactlyOnce(t, modelOrder(t, h), [][]string{ids})
	for _, id := range ids {
		if st := h.Status(id); st.State != inbox.StateProcessed {
			t.Errorf("message %s ended %s (%s: %s)", id, st.State, st.Reason, st.Detail)
		}
	}
	if s := h.Session(); s.Launches != 1 {
		t.Errorf("the harness was launched %d times; every restart should have adopted it", s.Launches)
	}
	checkCursorAtEnd(t, h, n)
}

// linesWith is the lines of log that name id.
func linesWith(log, id string) string {
	var b strings.Builder
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, id) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
