package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

// cursorLoop is the events cursor loop exactly as docs/cli.md prints it.
func cursorLoop(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sh\n(pantty events --follow --since [^`]*bridge\\.cursor[^`]*)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/cli.md has no cursor loop (```sh pantty events --follow --since … bridge.cursor```)")
	}
	return string(m[1])
}

// TestDocumentedCursorLoopSurvivesARecoverSweep runs the cursor loop of
// docs/cli.md as written, with handle appending each line to a file: a
// recover sweep in the middle prints a health line, which carries no cursor,
// and the next run must start where the first left off — not fail on a
// cursor of "null" — and repeat no message line.
func TestDocumentedCursorLoopSurvivesARecoverSweep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed: the documented loop uses it")
	}
	h := seattest.New(t, "loop")
	h.Start()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o700)
	if err := os.Symlink(h.Bin, filepath.Join(bin, "pantty")); err != nil {
		t.Fatal(err)
	}
	script := "handle() { printf '%s\\n' \"$1\" >> handled; }\n" + cursorLoop(t)
	handled := filepath.Join(dir, "handled")
	read := func() string { b, _ := os.ReadFile(handled); return string(b) }
	pass := func(what string, until func(string) bool) {
		t.Helper()
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(h.Env(), "PATH="+bin+":"+os.Getenv("PATH"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }()
		deadline := time.After(time.Minute)
		for !until(read()) {
			select {
			case err := <-done:
				t.Fatalf("%s: the loop ended (%v): %s\nhandled:\n%s", what, err, stderr.String(), read())
			case <-deadline:
				t.Fatalf("%s: timed out; stderr %s\nhandled:\n%s", what, stderr.String(), read())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	has := func(s ...string) func(string) bool {
		return func(got string) bool {
			for _, w := range s {
				if !strings.Contains(got, w) {
					return false
				}
			}
			return true
		}
	}
	// Run 1 starts at a time before m1 (--since takes one as well as a
	// cursor): m1's lines, then a sweep whose health line comes last.
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if err := os.WriteFile(filepath.Join(dir, "bridge.cursor"), []byte(start+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Send("m1", "first")
	pass("run 1", func(got string) bool {
		if !has(`"id":"m1"`, `"state":"processed"`)(got) {
			return false
		}
		if !strings.Contains(got, `"type":"health"`) {
			if r := h.Run("recover"); r.Code != 0 {
				t.Fatalf("recover: %s", r)
			}
			return false
		}
		return true
	})
	cur, _ := os.ReadFile(filepath.Join(dir, "bridge.cursor"))
	if c := strings.TrimSpace(string(cur)); c == "" || c == "null" || !strings.Contains(c, "/loop/m1/processed") {
		t.Fatalf("bridge.cursor after a health line: %q, want m1's processed cursor", c)
	}
	// Run 2 starts from that cursor: m2 comes, m1 does not come again.
	before := strings.Count(read(), `"id":"m1"`)
	h.Send("m2", "second")
	pass("run 2", has(`"id":"m2"`, `"state":"processed"`))
	if n := strings.Count(read(), `"id":"m1"`); n != before {
		t.Fatalf("run 2 repeated m1's lines (%d, was %d):\n%s", n, before, read())
	}
}
