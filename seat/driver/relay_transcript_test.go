package driver

import (
	"strings"
	"testing"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
)

// TestAPersonAtThePaneHoldsTheQueueAndKeepsTheirDraft pins relay as events
// in and pane actions and mode.toml out: a client that can type attached to
// the seat's session makes the seat relay and nothing is pasted; a read-only
// client or a control-mode watcher does not. When the person leaves with a
// draft in the input box the seat is direct but the queue still waits, and
// the draft is never cleared by pantty; once the person has emptied the box,
// the next boundary delivers.
func TestAPersonAtThePaneHoldsTheQueueAndKeepsTheirDraft(t *testing.T) {
	t.Parallel()
	d, pane := idleDriver(t)
	d.Ad = boxAdapter{}
	d.sess.TmuxName = "pantty-tr"
	d.relayIgnored = map[int]bool{}
	queue(t, d, "m1", "work m1")
	mode := func() state.Mode {
		t.Helper()
		m, err := d.S.ModeFile().Read()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	// Watchers that cannot type change nothing.
	pane.clients = []tmux.ClientInfo{{Session: "pantty-tr", PID: 40, ControlMode: true}, {Session: "pantty-tr", TTY: "/dev/pts/2", PID: 41, ReadOnly: true},
		{Session: "another-seat", TTY: "/dev/pts/5", PID: 44}}
	d.observeClients("client-attached")
	if d.mode.Mode == state.ModeRelay {
		t.Fatalf("a control-mode, a read-only and another session's client made the seat relay: %+v", d.mode)
	}

	// A person attaches: relay, recorded, and the queue waits.
	pane.clients = append(pane.clients, tmux.ClientInfo{Session: "pantty-tr", TTY: "/dev/pts/3", PID: 42})
	d.observeClients("client-attached")
	if m := mode(); m.Mode != state.ModeRelay || !strings.Contains(m.Why, "/dev/pts/3 pid 42") || d.phase != machine.Relay {
		t.Fatalf("after a typing client attached: mode %+v, phase %s", m, d.phase)
	}
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("the driver touched the pane while a person had it: %q", got)
	}

	// The person leaves a half-typed prompt behind.
	draft := strings.Replace(idleScreen, "> ", "> half-typed question for the model", 1)
	pane.show(draft)
	pane.clients = pane.clients[:3]
	d.observeClients("client-detached")
	if m := mode(); m.Mode != state.ModeDraft || m.Draft != "half-typed question for the model" {
		t.Fatalf("after the person left a draft: mode %+v", m)
	}
	submitNow(t, d)
	submitNow(t, d)
	if got := pane.did(); len(got) != 0 {
		t.Fatalf("the driver touched the pane while the person's draft was in the box: %q", got)
	}
	if st := status(t, d, "m1"); st.State != inbox.StateQueued {
		t.Fatalf("m1 while the draft holds the queue: %+v", st)
	}

	// The person clears the box: the next boundary delivers.
	pane.show(idleScreen)
	submitNow(t, d)
	got := pane.did()
	if len(got) != 2 || !strings.HasPrefix(got[0], "paste ") || got[1] != "keys Enter" {
		t.Fatalf("after the draft was cleared: %q, want the delivery", got)
	}
	if m := mode(); m.Mode != state.ModeDirect || m.Draft != "" {
		t.Fatalf("mode after the draft was gone: %+v", m)
	}
	pane.mu.Lock()
	defer pane.mu.Unlock()
	for i, a := range pane.actions {
		if pane.shown[i] == draft {
			t.Errorf("%q sent while the person's draft was in the box", a)
		}
	}
}
