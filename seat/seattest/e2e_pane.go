package seattest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
)

// What the suite reads from a seat's pane and its evidence, where a
// harness's path may differ (E2E.PaneAfterFirstTurn, E2E.Submitted).

// firstScreen checks that the harness's first screen carries no warning:
// one there is of pantty's making until shown otherwise (its settings, its
// pane's terminal: Gemini CLI warned of no true colour in pantty's tmux
// pane until the seat's settings turned its compatibility warnings off;
// Claude Code of pantty's deny rules). A pane that opens after the first
// turn is read once its input box shows (it is drawn by then).
func (s E2E) firstScreen(r *E2ERig) {
	r.T.Helper()
	screen := r.Screen
	if s.PaneAfterFirstTurn {
		r.WaitPane()
		composer := s.Adapter.Caps().Composer
		var text string
		r.WaitFor("the pane's first screen drawn (its input box)", 30*time.Second, func() bool {
			text = r.Screen()
			_, ok := composer(text)
			return composer == nil && strings.TrimSpace(text) != "" || composer != nil && ok
		})
		screen = func() string { return text }
	}
	for _, line := range strings.Split(screen(), "\n") {
		if strings.Contains(line, "⚠") || strings.Contains(strings.ToLower(line), "warning:") {
			r.T.Errorf("the first screen warns: %s", strings.TrimSpace(line))
		}
	}
}

// submitted checks a processed message's submit evidence: E2E.Submitted,
// else the UserPromptSubmit hook's (HookBound).
func (s E2E) submitted(r *E2ERig, st inbox.Status) error {
	if s.Submitted != nil {
		return s.Submitted(r, st)
	}
	if !strings.Contains(st.Evidence, hookwire.EvUserPromptSubmit) {
		return fmt.Errorf("evidence %q, want UserPromptSubmit", st.Evidence)
	}
	return nil
}

// HookBound reports whether the hooks' UserPromptSubmit bound message st
// (its prompt starts with the guard header of st's id and nonce, on st's
// session, naming st's turn) whatever the driver took as its evidence.
func (r *E2ERig) HookBound(st inbox.Status) error {
	for _, ev := range r.Events(hookwire.EvUserPromptSubmit) {
		id, nonce, _, ok := guard.MatchHeader(ev.Fields.Prompt)
		if ok && id == st.ID && nonce == st.Nonce {
			if ev.Fields.SessionID != st.SessionID || ev.Fields.PromptID != st.PromptID {
				return fmt.Errorf("UserPromptSubmit of %s on session %s turn %s, the status says session %s turn %s",
					st.ID, ev.Fields.SessionID, ev.Fields.PromptID, st.SessionID, st.PromptID)
			}
			return nil
		}
	}
	return fmt.Errorf("no UserPromptSubmit carried %s's guard header (nonce %s)", st.ID, st.Nonce)
}

// WaitPane waits for the seat's pane: session.toml names one and tmux
// lists it alive.
func (h *Harness) WaitPane() {
	h.T.Helper()
	h.WaitFor("the seat's pane", 60*time.Second, func() bool {
		sess, err := h.Seat().SessionFile().Read()
		if err != nil || sess.PaneID == "" {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		panes, err := h.Tmux().ListPanes(ctx)
		for _, p := range panes {
			if p.ID == sess.PaneID && !p.Dead {
				return err == nil
			}
		}
		return false
	})
}

// screenNote is the pane's text for a failure message, or why there is
// none (a failure's report must not fail on a missing pane).
func (h *Harness) screenNote() string {
	sess, err := h.Seat().SessionFile().Read()
	if err != nil || sess.PaneID == "" {
		return fmt.Sprintf("(no pane: session.toml %+v %v)", sess, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := h.Tmux().Capture(ctx, sess.PaneID)
	if err != nil {
		return fmt.Sprintf("(capture pane %s: %v)", sess.PaneID, err)
	}
	return s
}
