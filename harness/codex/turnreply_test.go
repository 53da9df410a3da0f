package codex_test

import (
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
)

// TestTurnReplyIsTheRolloutsReply: the reply a message closed by the
// transcript keeps (codex.TurnReply, the rollout's task_complete) is the
// reply the Stop hook gave the driver for the same turn, on the real CLI:
// a plain turn and one with a tool step (the reply is the turn's last agent
// message, not the first). An unknown nonce has none.
func TestTurnReplyIsTheRolloutsReply(t *testing.T) {
	r := newRig(t, "cxreply")
	r.Start()
	r.Send("r1", "a plain turn")
	r.Send("r2", "a turn with a tool step\n[standin:bash=echo tool-step-output")
	r.Processed("r1", "r2")
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	sess := r.Session().ID
	for _, id := range []string{"r1", "r2"} {
		st := r.Status(id)
		if st.Reply == "" || st.ReplyBytes != len(st.Reply) {
			t.Fatalf("%s: the hook's reply %q (%d bytes): want a whole short reply to compare", id, st.Reply, st.ReplyBytes)
		}
		// The rollout's task_complete can come after the Stop hook that
		// made the message processed (in one CI run it was not there yet
		// when read): the driver asks for the reply only once FindTurn has
		// found the turn there, and so does this.
		r.WaitFor(id+"'s turn end in the rollout", 30*time.Second, func() bool {
			found, _, _ := codex.Adapter{}.FindTurn(r.Seat(), cfg, sess, id, st.Nonce)
			return found
		})
		got, err := (codex.Adapter{}).Caps().TurnReply(r.Seat(), cfg, sess, id, st.Nonce)
		t.Logf("%s: reply %q", id, got)
		if err != nil || got != st.Reply {
			t.Errorf("%s: the rollout's reply %q (%v), the hook's %q", id, got, err, st.Reply)
		}
	}
	if got, err := (codex.Adapter{}).Caps().TurnReply(r.Seat(), cfg, sess, "r1", "ffffffffffff"); err != nil || got != "" {
		t.Errorf("an unknown nonce's reply %q (%v), want none", got, err)
	}
}
