package claudecode_test

// `seat send --wait` on the real Claude Code: the reply a script gets is the one
// the stand-in answered, a failed (cancelled) turn exits 1, and the time from claude's Stop
// hook to `send --wait` returning is measured on pantty's own path.

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/claudecode"
	"github.com/pantty/pantty/harness/claudecode/standin"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
)

func TestSendWaitReturnsClaudesReply(t *testing.T) {
	r := newRig(t, "cc-wait")
	r.Start()

	// A long reply, scripted in the stand-in: it must come back whole.
	var long strings.Builder
	for i := 1; long.Len() < 3000; i++ {
		fmt.Fprintf(&long, "finding %03d: the reply must come back whole.\n", i)
	}
	want := strings.TrimSpace(long.String())
	r.api.Queue(standin.Reply{Text: want})
	res := r.RunStdin("review PR 42", "seat", "send", r.Name, "--id", "w-long", "--wait", "--timeout", "2m")
	if res.Code != 0 || res.Stdout != want+"\n" {
		t.Fatalf("send --wait: want exit 0 and the stand-in's %d-byte reply; got exit %d, %d bytes: %q\nstderr: %s",
			len(want), res.Code, len(res.Stdout), res.Stdout[:min(len(res.Stdout), 200)], res.Stderr)
	}
	if st := r.Status("w-long"); st.ReplyBytes != len(want) {
		t.Fatalf("status reply_bytes %d, want %d", st.ReplyBytes, len(want))
	}

	// A failed turn: a slow turn cancelled from outside fails its message
	// (cancelled). Failures of the means or the provider (401, billing, 5xx)
	// keep a message queued instead (docs/recover.md), so they cannot serve here.
	r.api.Queue(standin.Reply{Text: "too late", Delay: 30 * time.Second})
	done := make(chan seattest.Result, 1)
	go func() {
		done <- r.RunEnv(nil, "this one is cancelled", "seat", "send", r.Name, "--id", "w-fail", "--wait", "--timeout", "2m")
	}()
	r.WaitState("w-fail", inbox.StateSubmitted, 60*time.Second)
	// Its request must have reached the model first: an Escape between
	// UserPromptSubmit and claude's request (seen once under CI's load)
	// leaves the scripted reply for the next message.
	r.WaitFor("w-fail's request at the stand-in", 60*time.Second, func() bool { return r.api.Queued() == 0 })
	if c := r.Run("seat", "cancel", r.Name); c.Code != 0 {
		t.Fatalf("seat cancel: %s", c)
	}
	res = <-done
	if res.Code != 1 || res.Stdout != "" || !strings.Contains(res.Stderr, "message w-fail failed (cancelled") {
		t.Fatalf("a failed turn: want exit 1 and the reason on stderr; got %s\ndriver.log:\n%s", res, r.DriverLog())
	}

	// Latency: claude's Stop hook received → `send --wait` returned, per message.
	var lat []time.Duration
	for i := range 8 {
		id := fmt.Sprintf("w-lat-%d", i)
		cmd := exec.Command(r.Bin, "seat", "send", r.Name, "--id", id, "--wait", "--timeout", "2m")
		cmd.Env = r.Env()
		cmd.Stdin = strings.NewReader(fmt.Sprintf("short task %d", i))
		out, err := cmd.Output()
		returned := time.Now()
		if err != nil || !strings.Contains(string(out), "msg="+id+" ") {
			t.Fatalf("%s: %v, stdout %q", id, err, out)
		}
		st := r.Status(id)
		var stop hookwire.Event
		for _, ev := range r.Events(hookwire.EvStop) {
			if ev.File == st.TurnEnd {
				stop = ev
			}
		}
		if stop.ReceivedAt.IsZero() {
			t.Fatalf("%s: no Stop event %s", id, st.TurnEnd)
		}
		lat = append(lat, returned.Sub(stop.ReceivedAt))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("claude Stop hook received -> send --wait returned, %d messages: min %s, median %s, max %s (Claude Code %s)",
		len(lat), lat[0].Round(time.Millisecond), lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), claudecode.Version)
}
