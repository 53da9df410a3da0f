package flight

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// screens is a scripted transport: it shows one screen (or a sequence of
// frames, one per look) and records every operation.
type screens struct {
	mu     sync.Mutex
	frames []string
	did    []string
}

func (s *screens) Screen(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.frames[0]
	if len(s.frames) > 1 {
		s.frames = s.frames[1:]
	}
	return f, nil
}
func (s *screens) op(o string) error {
	s.mu.Lock()
	s.did = append(s.did, o)
	s.mu.Unlock()
	return nil
}
func (s *screens) Clear(context.Context) error           { return s.op("clear") }
func (s *screens) Put(_ context.Context, t string) error { return s.op("put " + t) }
func (s *screens) Enter(context.Context) error           { return s.op("enter") }
func (s *screens) Interrupt(context.Context) error       { return s.op("interrupt") }

// box reads "> TEXT" as the input box and anything else as a dialog; text
// starting with "[pantty]" is pantty's own.
var box = Box{
	Busy: func(s string) bool { return strings.Contains(s, "esc to interrupt") },
	Composer: func(s string) (string, bool) {
		t, ok := strings.CutPrefix(s, "> ")
		return t, ok
	},
	Own: func(t string) bool { return strings.HasPrefix(t, "[pantty]") },
}

// TestFillTouchesOnlyAFreeBox: keys go into an empty box as they are, into
// pantty's leftover after a clear, and into a dialog or a person's draft
// not at all (ErrNotPasted: nothing reached the harness).
func TestFillTouchesOnlyAFreeBox(t *testing.T) {
	for _, c := range []struct {
		screen, did string
		notPasted   bool
	}{
		{"> ", "put m", false},
		{"> [pantty] msg=old", "clear|put m", false},
		{"> half a thought", "", true},
		{"Trust this folder?\n1. Yes\n2. No", "", true},
	} {
		tr := &screens{frames: []string{c.screen}}
		a, err := WriteAhead("m", func() error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		_, err = Fill(context.Background(), tr, box, a)
		if got := strings.Join(tr.did, "|"); got != c.did || errors.Is(err, ErrNotPasted) != c.notPasted {
			t.Errorf("%q: did %q, err %v; want %q, not pasted %v", c.screen, got, err, c.did, c.notPasted)
		}
	}
}

// TestNoKeyWithoutADurableRecord: a record that fails to write makes no
// Ahead, and Fill without one (the zero Ahead) sends no key at all: the
// write-ahead rule is the flight's, whatever door or transport.
func TestNoKeyWithoutADurableRecord(t *testing.T) {
	full := errors.New("no space left on device")
	if _, err := WriteAhead("m", func() error { return full }); !errors.Is(err, ErrUnwritten) || !strings.Contains(err.Error(), full.Error()) {
		t.Fatalf("WriteAhead with a failing record: %v", err)
	}
	tr := &screens{frames: []string{"> "}}
	if _, err := Fill(context.Background(), tr, box, Ahead{}); !errors.Is(err, ErrUnwritten) || len(tr.did) != 0 {
		t.Fatalf("Fill without a record: %v, did %q", err, tr.did)
	}
}

// TestEnterGoesOnlyOntoTheBox: a dialog that came up after the paste gets
// no Enter (its answer would be the Enter); the box, full or empty, does.
func TestEnterGoesOnlyOntoTheBox(t *testing.T) {
	tr := &screens{frames: []string{"Try the new renderer?\n> Yes"}}
	if err := Enter(context.Background(), tr, box); !errors.Is(err, ErrBoxNotFree) || len(tr.did) != 0 {
		t.Fatalf("Enter onto a dialog: %v, did %q", err, tr.did)
	}
	tr = &screens{frames: []string{"> [pantty] msg=m1"}}
	if err := Enter(context.Background(), tr, box); err != nil || strings.Join(tr.did, "|") != "enter" {
		t.Fatalf("Enter onto the box: %v, did %q", err, tr.did)
	}
}

// TestAwaitNeedsCondToHold: a condition seen once and lost again does not
// count while Hold asks for more; one that stays does; a limit ends a wait
// that never sees it; no condition is the settle alone.
func TestAwaitNeedsCondToHold(t *testing.T) {
	shows := func(s string) bool { return s == "yes" }
	tr := &screens{frames: []string{"no", "yes", "no", "yes"}}
	start := time.Now()
	if !Await(tr, Wait{Every: 5 * time.Millisecond, Limit: time.Second, Hold: 20 * time.Millisecond, Cond: shows}) {
		t.Fatal("a condition that held was not seen")
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("answered after %s: the look that lost it did not restart the hold", took)
	}
	if Await(&screens{frames: []string{"no"}}, Wait{Every: 5 * time.Millisecond, Limit: 30 * time.Millisecond, Cond: shows}) {
		t.Fatal("a condition never shown counted")
	}
	tr = &screens{frames: []string{"no"}}
	if !Await(tr, Wait{Quiet: 10 * time.Millisecond}) || len(tr.did) != 0 {
		t.Fatal("a settle without a condition looked or failed")
	}
}

// TestDialogWordsNameTheDialog: the lines below the last rule, one line,
// cut, credentials redacted; a blank screen says so.
func TestDialogWordsNameTheDialog(t *testing.T) {
	got := DialogWords("work\n────────\n Quick safety check \n\n 1. Yes, I trust this folder\n 2. No, exit\n")
	if got != "Quick safety check / 1. Yes, I trust this folder / 2. No, exit" {
		t.Fatalf("%q", got)
	}
	if DialogWords("\n\n") != BlankScreen {
		t.Fatal("a blank screen is not named so")
	}
}
