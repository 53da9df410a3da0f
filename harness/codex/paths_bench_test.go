package codex_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// BenchmarkCodexPaths measures delivery on both Codex paths in one run, one
// message on each per iteration, interleaved, on the real Codex CLI against
// its stand-in (docs/codex.md, "Both paths in one run"):
//
//   - the tmux path, a seat run by a real driver: the paste's record
//     (the artifact's sent_at) → UserPromptSubmit evidence, `seat send`
//     returned → the same evidence, Stop → the message's final status, and
//     the whole record → final;
//   - the app-server path, pantty's client on a seat's own server (no
//     driver is wired to it yet, so no queue pickup and no durable records
//     are in these figures): turn/start sent → turn/started, → the same
//     UserPromptSubmit evidence (pantty's hooks run in the server), Stop →
//     turn/completed at the client, and turn/start → turn/completed.
//
// Every message must reach the model exactly once on its path. Run:
//
//	go test -run '^$' -bench CodexPaths -benchtime 10x ./harness/codex
func BenchmarkCodexPaths(b *testing.B) {
	ctx := context.Background()
	tm := newRig(b, "cxbt")
	tm.Start()
	as := newRig(b, "cxba")
	s := as.Seat()
	cfg, err := s.LoadConfig()
	if err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv, err := codex.StartAppServer(sctx, harness.Launch{Seat: s, Config: cfg, Pantty: as.Bin}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	c, err := srv.Dial(sctx, "pantty", "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	th, err := c.StartThread(sctx, cfg.Workdir)
	if err != nil {
		b.Fatal(err)
	}
	var m pathTimes
	for i := 0; b.Loop(); i++ {
		m.tmux(tm, fmt.Sprintf("bt%03d", i))
		m.appServer(as, c, th.ID, fmt.Sprintf("ba%03d", i))
	}
	b.StopTimer()
	for _, r := range []*rig{tm, as} {
		for id, n := range r.Turns() {
			if n != 1 {
				b.Errorf("%s reached the model %d times", id, n)
			}
		}
	}
	m.report(b)
}

// pathTimes holds each figure's samples, named as reported.
type pathTimes map[string][]time.Duration

// tmux sends one message through the tmux seat's driver and records its
// figures from the seat's records.
func (m *pathTimes) tmux(r *rig, id string) {
	r.Send(id, "a delivery probe on the tmux path "+id)
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
	m.add("tmux-record→evidence-ms", st.SubmittedAt.Sub(a.SentAt))
	m.add("tmux-send→evidence-ms", st.SubmittedAt.Sub(sent))
	m.add("tmux-record→final-ms", st.EndedAt.Sub(a.SentAt))
	if stop, ok := eventOf(r, hookwire.EvStop, func(ev hookwire.Event) bool { return ev.Fields.PromptID == st.PromptID }); ok {
		m.add("tmux-Stop→final-ms", st.EndedAt.Sub(stop.ReceivedAt))
	}
}

// appServer submits one message as a turn on the seat's own server and
// records its figures from the client's notifications and the hooks'
// events.
func (m *pathTimes) appServer(r *rig, c *appserver.Conn, thread, id string) {
	sub, err := guard.Guard(guard.Message{ID: id, From: "alice", Text: "a delivery probe on the app-server path " + id}, codex.Adapter{}.Facts())
	if err != nil {
		r.T.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	turn, err := c.Submit(ctx, thread, sub)
	if err != nil {
		r.T.Fatal(err)
	}
	var started, completed time.Time
	for completed.IsZero() {
		select {
		case n := <-c.Notifications():
			switch {
			case n.Method == appserver.MethodTurnStarted && strings.Contains(string(n.Params), turn.ID):
				started = time.Now()
			case n.Method == appserver.MethodTurnCompleted:
				if e, ok := appserver.TurnEnd(n); ok && e.TurnID == turn.ID {
					if e.Status != appserver.StatusCompleted {
						r.T.Fatalf("%s: turn %s %s", id, e.Status, e.Info)
					}
					completed = time.Now()
				}
			}
		case <-ctx.Done():
			r.T.Fatalf("%s: no turn/completed", id)
		}
	}
	m.add("as-submit→started-ms", started.Sub(t0))
	m.add("as-submit→completed-ms", completed.Sub(t0))
	var ups, stop hookwire.Event
	r.WaitFor("the turn's hook events", 10*time.Second, func() bool {
		var ok1, ok2 bool
		ups, ok1 = eventOf(r, hookwire.EvUserPromptSubmit, func(ev hookwire.Event) bool { return strings.HasPrefix(ev.Fields.Prompt, sub.Header()) })
		stop, ok2 = eventOf(r, hookwire.EvStop, func(ev hookwire.Event) bool { return ev.Fields.PromptID == turn.ID })
		return ok1 && ok2
	})
	m.add("as-submit→evidence-ms", ups.ReceivedAt.Sub(t0))
	m.add("as-Stop→completed-ms", completed.Sub(stop.ReceivedAt))
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

// report gives each figure's median as a benchmark metric, in ms.
func (m pathTimes) report(b *testing.B) {
	for name, ds := range m {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Millisecond), name)
	}
	b.ReportMetric(0, "ns/op") // an iteration is two real turns: its time says nothing
}
