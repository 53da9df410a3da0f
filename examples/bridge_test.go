package examples_test

// board-bridge.sh run for real: the shell script, the pantty binary and a
// simulated seat in a private tmux server.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/seattest"
)

// TestMain fails the package if the bridge test leaves a tmux server, driver
// or simulated harness behind.
func TestMain(m *testing.M) { os.Exit(seattest.Main(m)) }

func TestBoardBridgeSpool(t *testing.T) {
	h := seattest.New(t, "bridge", seattest.TOML(`turn_ceiling = "2s"`))
	h.Start()
	spool := t.TempDir()
	in := filepath.Join(spool, "in")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]string{
		"pr-42":      "review PR 42",
		"stuck":      "this one never ends [sim:hang]",
		"bad id!":    "refused for its id",
		"multi-line": "first line\nsecond line\n",
		"taken":      "a task whose id is already used",
	}
	h.Send("taken", "another message under the same id, sent before")
	for id, text := range tasks {
		if err := os.WriteFile(filepath.Join(in, id+".task"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// runAs runs one pass of the bridge for seat name; run, for the seat.
	runAs := func(name string) (int, string) {
		cmd := exec.Command("sh", "board-bridge.sh", name, spool)
		cmd.Env = append(h.Env(), "PANTTY="+h.Bin, "BRIDGE_TIMEOUT=60s")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	run := func() (int, string) { return runAs(h.Name) }
	// A mistyped seat name first: the pass stops with exit 5 and marks nothing
	// done or refused; the claimed tasks wait in work/.
	if code, stderr := runAs("brigde"); code != 5 || !strings.Contains(stderr, "unknown seat") {
		t.Fatalf("bridge with a mistyped seat: want exit 5 naming it, got exit %d: %s", code, stderr)
	}
	if out, done := mustGlob(t, filepath.Join(spool, "out", "*")), mustGlob(t, filepath.Join(spool, "done", "*")); len(out)+len(done) != 0 {
		t.Fatalf("a pass with a mistyped seat marked tasks: out %v, done %v", out, done)
	}
	if code, stderr := run(); code != 0 {
		t.Fatalf("bridge: exit %d: %s", code, stderr)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(spool, "out", name))
		if err != nil {
			t.Fatalf("out/%s: %v", name, err)
		}
		return string(b)
	}
	// Each result is what the model replied to that task: the simulator answers
	// with the prompt's length and first line, which carries the message id.
	for _, id := range []string{"pr-42", "multi-line"} {
		if got := read(id + ".result"); !strings.HasPrefix(got, "sim: received") || !strings.Contains(got, "msg="+id+" ") {
			t.Errorf("out/%s.result = %q, not the model's reply to %s", id, got, id)
		}
		if st := h.Status(id); st.State != "processed" {
			t.Errorf("%s is %s", id, st.State)
		}
	}
	if got := read("stuck.failed"); !strings.Contains(got, "failed (ceiling") {
		t.Errorf("out/stuck.failed = %q", got)
	}
	if got := read("bad id!.refused"); !strings.Contains(got, "message id") {
		t.Errorf("out/bad id!.refused = %q", got)
	}
	if got := read("taken.conflict"); !strings.Contains(got, "conflict: message taken is already stored with a different text") {
		t.Errorf("out/taken.conflict = %q", got)
	}
	left, _ := filepath.Glob(filepath.Join(spool, "*", "*.task"))
	if len(left) != len(tasks) || len(mustGlob(t, filepath.Join(spool, "done", "*.task"))) != len(tasks) {
		t.Errorf("tasks not all moved to done/: %v", left)
	}
	// Running it again is a no-op: nothing new in in/, nothing resent.
	turns := len(h.Requests())
	if code, stderr := run(); code != 0 || len(h.Requests()) != turns {
		t.Fatalf("second pass: exit %d, %d new requests: %s", code, len(h.Requests())-turns, stderr)
	}
	// A crash while waiting leaves the task in work/: the next pass sends the
	// same id again (a duplicate, not a second turn) and collects its result.
	if err := os.Rename(filepath.Join(spool, "done", "pr-42.task"), filepath.Join(spool, "work", "pr-42.task")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(spool, "out", "pr-42.result"))
	if code, stderr := run(); code != 0 || len(h.Requests()) != turns || !strings.Contains(read("pr-42.result"), "msg=pr-42 ") {
		t.Fatalf("re-run after a crash: exit %d, %d new requests: %s", code, len(h.Requests())-turns, stderr)
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
