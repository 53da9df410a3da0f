package driver

import (
	"bytes"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
)

// TestTurnStartLatencyIsLoggedOnceInEitherOrder pins timeTurn: turn/start's
// answer and the turn's turn/started reach the loop on two channels, either
// first; driver.log says turn/start sent → turn/started once both are in,
// for the board's turn only (a person's turn/started in between is not
// taken for it), and once.
func TestTurnStartLatencyIsLoggedOnceInEitherOrder(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	started := func(d *Driver, turn string) {
		d.onNote(appserver.Message{Method: appserver.MethodTurnStarted,
			Params: []byte(`{"threadId":"th","turn":{"id":"` + turn + `"}}`)})
	}
	for _, answerFirst := range []bool{true, false} {
		var buf bytes.Buffer
		now := sent
		d := &Driver{Log: log.New(&buf, "", 0), clock: func() time.Time { return now }}
		as := &asLink{thread: "th", turn: turnPending, sentAt: sent}
		d.as = as
		now = sent.Add(5 * time.Millisecond)
		started(d, "person") // not the board's turn
		if answerFirst {
			as.answered = "t1"
			d.timeTurn(as)
		}
		now = sent.Add(12300 * time.Microsecond)
		started(d, "t1")
		if !answerFirst {
			as.answered = "t1"
			d.timeTurn(as)
		}
		started(d, "t1") // a repeat logs nothing more
		want := "turn t1 started (turn/started) 12.3ms after its turn/start\n"
		if got := buf.String(); got != want {
			t.Errorf("answer first %v: driver.log %q, want %q", answerFirst, got, want)
		}
		if strings.Contains(buf.String(), "person") {
			t.Errorf("a person's turn was timed: %q", buf.String())
		}
	}
}

// TestAnIdleThreadEndsATurnWhoseEndNeverCame pins watchIdle: the server
// said the thread went idle and the turn's turn/completed never came (a
// lost notification): after idleGrace the turn is taken as ended, so the
// thread's busy state does not hold the queue for good; the person's wait
// on that turn ends with it. A new turn, or the thread active again, in the
// meantime leaves everything as it is.
func TestAnIdleThreadEndsATurnWhoseEndNeverCame(t *testing.T) {
	old := idleGrace
	idleGrace = 10 * time.Millisecond
	defer func() { idleGrace = old }()
	status := func(d *Driver, typ string) {
		d.onNote(appserver.Message{Method: appserver.MethodThreadStatus,
			Params: []byte(`{"threadId":"th","status":{"type":"` + typ + `"}}`)})
	}
	settle := func(d *Driver) {
		select {
		case a := <-d.rpcDone:
			d.onAnswer(a)
		case <-time.After(5 * time.Second):
			t.Fatal("watchIdle's timer never answered")
		}
	}
	for _, c := range []struct {
		name    string
		between func(d *Driver)
		ended   bool
	}{
		{"lost turn/completed", func(*Driver) {}, true},
		{"active again", func(d *Driver) { status(d, "active") }, false},
		{"a new turn", func(d *Driver) {
			d.onNote(appserver.Message{Method: appserver.MethodTurnStarted, Params: []byte(`{"threadId":"th","turn":{"id":"t2"}}`)})
		}, false},
	} {
		var buf bytes.Buffer
		d := &Driver{Log: log.New(&buf, "", 0), foreignTurn: "t1"}
		as := &asLink{thread: "th", turn: "t1"}
		d.as = as
		status(d, "idle")
		c.between(d)
		settle(d)
		if ended := as.turn == ""; ended != c.ended || ended && (d.foreignTurn != "" || !strings.Contains(buf.String(), "turn t1: the thread has been idle")) {
			t.Errorf("%s: turn %q, foreign %q, driver.log %q", c.name, as.turn, d.foreignTurn, buf.String())
		}
	}
}
