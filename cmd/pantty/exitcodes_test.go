package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/seattest"
)

// TestEveryDocumentedExitCodeIsReturned runs the binary into each code of the
// exit-code table (exitcodes.go, repeated in docs/cli.md), several ways where a
// script must tell causes apart: an unknown seat or state root is not a bad
// message, a conflicting id is neither. A code in the table without a case
// here, or missing from the doc, fails.
func TestEveryDocumentedExitCodeIsReturned(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "codes")
	missing := filepath.Join(t.TempDir(), "no-such-root")
	h.Send("m1", "a queued message")

	// A live holder that is not a driver: this test process takes the lock.
	held := seattest.New(t, "held")
	lock, err := seat.Acquire(held.Seat())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The harness's clean-up kills a recorded driver: this process is none.
		lock.Release()
		os.Remove(held.Seat().OwnerFile().Path())
	})

	// An inbox that cannot be read: a file where its status directory is.
	blind := seattest.New(t, "blind")
	st := filepath.Join(blind.Seat().Dir, "inbox", "status")
	if err := os.RemoveAll(st); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(st), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	type run struct {
		h     *seattest.Harness
		env   map[string]string
		stdin string
		args  []string
		says  string // a word of stdout+stderr
	}
	cases := map[int][]run{
		exitOK: {
			{h: h, args: []string{"status"}, says: "codes"},
			{h: h, stdin: "a queued message", args: []string{"seat", "send", "codes", "--id", "m1"}, says: "duplicate"},
			{h: held, args: []string{"seat", "start", "held"}, says: "already running"},
			{h: held, args: []string{"seat", "prepare-home", "--dry-run", "held"}, says: "nothing of yours would change"}, // writes nothing: a held seat may be asked
		},
		exitFailed: {
			{h: h, args: []string{"seat", "retry", "codes", "m1"}, says: "not failed"},
		},
		exitBadInput: {
			{h: h, args: []string{"seat", "send", "codes"}, says: "empty"},
			{h: h, args: []string{"seat", "retry", "codes"}, says: "usage: pantty seat retry NAME ID"},
			{h: h, args: []string{"seat", "init", "Bad.Name", "--harness", "sim", "--workdir", h.Work}, says: "seat name"},
		},
		exitRefused: {
			{h: held, args: []string{"seat", "start", "held", "--takeover", "h-00000000"}, says: lock.Owner.Holder},
			{h: held, args: []string{"seat", "prepare-home", "held"}, says: lock.Owner.Holder},
		},
		exitUnknown: {
			{h: blind, args: []string{"events"}, says: "could not observe"},
		},
		exitNotFound: {
			{h: h, stdin: "x", args: []string{"seat", "send", "nosuch"}, says: "unknown seat"},
			{h: h, args: []string{"status", "nosuch"}, says: "unknown seat"},
			{h: h, args: []string{"seat", "retry", "codes", "nosuchmsg"}, says: "no message"},
			{h: h, args: []string{"seat", "show", "codes", "nosuchmsg"}, says: "no message"},
			{h: h, env: map[string]string{"PANTTY_HOME": missing}, args: []string{"status"}, says: "no state root"},
			{h: h, env: map[string]string{"PANTTY_HOME": missing}, args: []string{"seat", "list"}, says: "no state root"},
			{h: h, env: map[string]string{"PANTTY_HOME": missing}, args: []string{"events"}, says: "no state root"},
			{h: h, env: map[string]string{"PANTTY_HOME": missing}, args: []string{"recover", "--dry-run"}, says: "no state root"},
		},
		exitConflict: {
			{h: h, stdin: "another text", args: []string{"seat", "send", "codes", "--id", "m1"}, says: "conflict"},
		},
	}
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range exitCodes {
		if !strings.Contains(string(doc), fmt.Sprintf("\n| %d | %s |", row.code, row.meaning)) {
			t.Errorf("docs/cli.md's exit-code table lacks the row | %d | %s |", row.code, row.meaning)
		}
		runs := cases[row.code]
		if len(runs) == 0 {
			t.Errorf("exit %d (%s): no case runs the binary into it", row.code, row.meaning)
		}
		for _, c := range runs {
			var r seattest.Result
			if c.env != nil {
				r = c.h.RunEnv(c.env, c.stdin, c.args...)
			} else {
				r = c.h.RunStdin(c.stdin, c.args...)
			}
			if r.Code != row.code || !strings.Contains(r.Stdout+r.Stderr, c.says) {
				t.Errorf("pantty %s: want exit %d (%s) saying %q; got %s", strings.Join(c.args, " "), row.code, row.meaning, c.says, r)
			}
			if row.code != exitOK && strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("pantty %s: want one line on stderr, got %q", strings.Join(c.args, " "), r.Stderr)
			}
		}
	}
}
