package codex_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// BenchmarkCodexPaths measures delivery on both Codex paths in one run, one
// message on each per iteration, interleaved, on the real Codex CLI against
// its stand-in (docs/codex.md, "Both paths in one run"). Each path is a seat
// run by a real driver through the CLI verbs (`seat send`), the tmux path's
// and one with transport = "app-server", measured the same way from the
// seat's records:
//
//   - the write-ahead record (the artifact's sent_at) → the driver's
//     submit evidence (status submitted_at: the paste's UserPromptSubmit on
//     the tmux path; on the app-server path turn/start's answer or
//     UserPromptSubmit, whichever came first), and → the UserPromptSubmit
//     hook's own event (received_at, written by `pantty hook`);
//   - `seat send` returned → the driver's submit evidence;
//   - the Stop hook's event → the message final, and the record → final;
//   - on the app-server path, turn/start sent → its answer and → its
//     turn/started, as the driver logs them.
//
// Every message must be processed and reach the model exactly once on its
// path, counted at its stand-in. Run:
//
//	go test -run '^$' -bench CodexPaths -benchtime 10x ./harness/codex
func BenchmarkCodexPaths(b *testing.B) {
	tm := newRig(b, "cxbt")
	tm.Start()
	as := newRig(b, "cxba", appServerTOML)
	as.Start()
	var m pathTimes
	var ids []string
	for i := 0; b.Loop(); i++ {
		m.seat("tmux", tm, fmt.Sprintf("bt%03d", i))
		m.seat("as", as, fmt.Sprintf("ba%03d", i))
		ids = append(ids, fmt.Sprintf("%03d", i))
	}
	b.StopTimer()
	for _, p := range []struct {
		r      *rig
		prefix string
	}{{tm, "bt"}, {as, "ba"}} {
		turns := p.r.Turns()
		for _, n := range ids {
			if id := p.prefix + n; turns[id] != 1 {
				b.Errorf("%s reached the model %d times, want once", id, turns[id])
			}
		}
		if len(turns) != len(ids) {
			b.Errorf("%d messages reached %s's stand-in, %d sent: %v", len(turns), p.r.Name, len(ids), turns)
		}
	}
	if n := m.asTurnStart(as); n != len(ids) {
		b.Errorf("turn/start's answer and turn/started logged for %d of %d messages", n, len(ids))
	}
	m.report(b)
}

// pathTimes holds each figure's samples, named as reported.
type pathTimes map[string][]time.Duration

// seat sends one message through seat r's driver and records its figures,
// named path-…, from the seat's records.
func (m *pathTimes) seat(path string, r *rig, id string) {
	r.Send(id, "a delivery probe on the "+path+" path "+id)
	sent := time.Now()
	r.WaitFinal(60*time.Second, id)
	st := r.Status(id)
	if st.State != inbox.StateProcessed {
		r.T.Fatalf("%s ended %s: %s", id, st.State, st.Detail)
	}
	a, err := r.Seat().ArtifactFile(id, st.Attempts).Read()
	if err != nil {
		r.T.Fatal(err)
	}
	m.add(path+"-record→evidence-ms", st.SubmittedAt.Sub(a.SentAt))
	m.add(path+"-send→evidence-ms", st.SubmittedAt.Sub(sent))
	m.add(path+"-record→final-ms", st.EndedAt.Sub(a.SentAt))
	var ups, stop hookwire.Event
	r.WaitFor(id+"'s UserPromptSubmit and Stop events", 10*time.Second, func() bool {
		var ok1, ok2 bool
		ups, ok1 = eventOf(r, hookwire.EvUserPromptSubmit, func(ev hookwire.Event) bool {
			got, nonce, _, ok := guard.MatchHeader(ev.Fields.Prompt)
			return ok && got == id && nonce == st.Nonce
		})
		stop, ok2 = eventOf(r, hookwire.EvStop, func(ev hookwire.Event) bool { return ev.Fields.PromptID == st.PromptID })
		return ok1 && ok2
	})
	m.add(path+"-record→UserPromptSubmit-ms", ups.ReceivedAt.Sub(a.SentAt))
	m.add(path+"-Stop→final-ms", st.EndedAt.Sub(stop.ReceivedAt))
	// Which witness the driver took, counted (a sample of 1 per message
	// that it names): the submit evidence, and the turn end.
	for _, w := range []struct{ name, field, word string }{
		{"-evidence-by-UserPromptSubmit", st.Evidence, hookwire.EvUserPromptSubmit},
		{"-evidence-by-turn/start", st.Evidence, "app-server turn/start"},
		{"-closed-by-Stop", st.TurnEnd, hookwire.EvStop},
		{"-closed-by-turn/completed", st.TurnEnd, "app-server turn/completed"},
	} {
		if strings.Contains(w.field, w.word) {
			m.count(path + w.name)
		}
	}
}

// The driver's log lines of a turn/start's answer and of its turn/started
// (seat/driver, asWay), each with its latency from the turn/start sent.
var (
	answeredLine = regexp.MustCompile(`message (ba\d+): turn/start answered in (\S+): turn (\S+)`)
	startedLine  = regexp.MustCompile(`turn (\S+) started \(turn/started\) (\S+) after its turn/start`)
)

// asTurnStart records, for each of the app-server seat's messages, turn/start
// sent → answered and → turn/started, from the driver's log, and returns
// for how many; a message without both lines fails the bench.
func (m *pathTimes) asTurnStart(r *rig) int {
	log, n := r.DriverLog(), 0
	started := map[string]time.Duration{}
	for _, sm := range startedLine.FindAllStringSubmatch(log, -1) {
		if d, err := time.ParseDuration(sm[2]); err == nil {
			started[sm[1]] = d
		}
	}
	for _, am := range answeredLine.FindAllStringSubmatch(log, -1) {
		answered, err := time.ParseDuration(am[2])
		st, ok := started[am[3]]
		if err != nil || !ok {
			r.T.Errorf("%s: turn %s answered %q, no turn/started logged", am[1], am[3], am[2])
			continue
		}
		m.add("as-turn/start→answered-ms", answered)
		m.add("as-turn/start→turn/started-ms", st)
		n++
	}
	return n
}

// eventOf is the seat's first hook event of kind that match accepts.
func eventOf(r *rig, kind string, match func(hookwire.Event) bool) (hookwire.Event, bool) {
	for _, ev := range r.Events(kind) {
		if match(ev) {
			return ev, true
		}
	}
	return hookwire.Event{}, false
}

func (m *pathTimes) add(name string, d time.Duration) {
	if *m == nil {
		*m = pathTimes{}
	}
	(*m)[name] = append((*m)[name], d)
}

// count adds one to a tally, kept as a sample of 1 ns per case.
func (m *pathTimes) count(name string) { m.add(name+"-count", 1) }

// report gives each figure's median as a benchmark metric, in ms, and each
// tally's count.
func (m pathTimes) report(b *testing.B) {
	for name, ds := range m {
		if strings.HasSuffix(name, "-count") {
			b.ReportMetric(float64(len(ds)), name)
			continue
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), name)
	}
	b.ReportMetric(0, "ns/op") // an iteration is two real turns: its time says nothing
}
