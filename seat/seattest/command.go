package seattest

import (
	"context"
	"strings"
	"time"
)

// CommandSparesDraft is the check that the command door never lands in a busy
// composer: it types a draft into the seat's input box as a person would (no
// Enter), waits until composer reads it back, runs `seat command NAME --wait 1s
// -- command...`, and fails the test unless that exits 1 refusing unsent and the
// draft is still exactly as typed. composer is the adapter's own box reader.
func (h *Harness) CommandSparesDraft(composer func(string) (string, bool), command ...string) {
	h.T.Helper()
	const draft = "a person is still typing this"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Tmux().SendLiteral(ctx, h.Session().PaneID, draft); err != nil {
		h.T.Fatal(err)
	}
	h.WaitFor("the draft in the input box", 10*time.Second, func() bool {
		box, ok := composer(h.Screen())
		return ok && box == draft
	})
	r := h.Run(append([]string{"seat", "command", h.Name, "--wait", "1s", "--"}, command...)...)
	if r.Code != 1 || !strings.Contains(r.Stderr, "not sent") || !strings.Contains(r.Stderr, "input box holds text") {
		h.T.Fatalf("command over a draft: want exit 1 refusing unsent, got %s", r)
	}
	if box, ok := composer(h.Screen()); !ok || box != draft {
		h.T.Fatalf("the draft was touched: the box holds %q", box)
	}
}
