package main

// Every command pantty suggests in its output must work when pasted: the test
// collects the hints from what the real binary prints on the paths a newcomer
// meets (a send to a stopped seat, a --wait that times out, a cancelled
// message, a start of a running seat, a usage line) and runs each one.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
)

// hintRE finds a pantty command in running text: "pantty", a command of the
// app, then words up to a quote, a bracket, a comma or a semicolon.
var hintRE = regexp.MustCompile(`pantty ([a-z][a-z-]*(?: [^\s'(),;]+)*)`)

// hints returns every pantty command named in text whose first word is one of
// the app's commands (so "pantty: " prefixes and prose are not hints).
func hints(text string) [][]string {
	verbs := map[string]bool{}
	for _, c := range newApp().Commands {
		verbs[c.Name] = true
	}
	var out [][]string
	for _, m := range hintRE.FindAllStringSubmatch(text, -1) {
		f := strings.Fields(m[1])
		if verbs[f[0]] {
			out = append(out, f)
		}
	}
	return out
}

// hintsOf is hints of a result, failing the test when it names none: a path
// that printed no hint would make this test pass for nothing.
func hintsOf(t *testing.T, what string, r seattest.Result) [][]string {
	t.Helper()
	hs := hints(r.Stdout + r.Stderr)
	if len(hs) == 0 {
		t.Fatalf("%s printed no pantty command to run: %s", what, r)
	}
	return hs
}

// runHint runs one hint as pasted (placeholders NAME and ID filled in as a
// person would) with nothing on stdin, and fails unless it exits want (any
// code but a usage error when want is -1).
func runHint(t *testing.T, h *seattest.Harness, hint []string, id string, want int) seattest.Result {
	t.Helper()
	args := make([]string, len(hint))
	for i, a := range hint {
		switch a {
		case "NAME":
			a = h.Name
		case "ID":
			a = id
		}
		args[i] = a
	}
	r := h.Run(args...)
	if (want >= 0 && r.Code != want) || (want < 0 && (r.Code == exitBadInput || strings.Contains(r.Stderr, "usage"))) {
		t.Fatalf("the hint `pantty %s` (run as `pantty %s`): want exit %d, got %s", strings.Join(hint, " "), strings.Join(args, " "), want, r)
	}
	return r
}

func TestEveryHintWorksWhenPasted(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "hints")

	// A send to a stopped seat says the message waits for a start, and how.
	r := h.RunStdin("first", "seat", "send", h.Name, "--id", "q0")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "q0" || !strings.Contains(r.Stderr, "not running") {
		t.Fatalf("send to a stopped seat: want its id and a line saying it waits for a start; got %s", r)
	}
	startHint := hintsOf(t, "send to a stopped seat", r)[0]

	// --wait --timeout on it names how to wait again.
	r = h.RunStdin("anyone there?", "seat", "send", h.Name, "--id", "w1", "--wait", "--timeout", "300ms")
	if r.Code != exitUnknown {
		t.Fatalf("send --wait --timeout on a stopped seat: %s", r)
	}
	var waitAgain []string
	for _, hint := range hintsOf(t, "send --wait --timeout", r) {
		if hint[1] == "send" {
			waitAgain = hint
		}
	}
	if waitAgain == nil {
		t.Fatalf("no wait-again hint in %s", r)
	}
	runHint(t, h, startHint, "", exitOK)
	if r := runHint(t, h, waitAgain, "", exitOK); !strings.Contains(r.Stdout, "sim: received") {
		t.Fatalf("the wait-again hint did not print the reply: %s", r)
	}

	// A start of the running seat: done, and it names the takeover.
	r = h.Run("seat", "start", h.Name)
	if r.Code != exitOK || !strings.Contains(r.Stdout, "already running") {
		t.Fatalf("start of a running seat: %s", r)
	}
	if r := runHint(t, h, hintsOf(t, "start of a running seat", r)[0], "", exitOK); !strings.Contains(r.Stdout, "adopted") {
		t.Fatalf("the takeover hint did not adopt the harness: %s", r)
	}

	// A cancelled message names the seat in its retry hint.
	h.Send("c1", "a slow one [sim:hang]")
	s := h.Seat()
	h.WaitFor("c1 in its turn", time.Minute, func() bool {
		st, err := s.ReadStatus("c1")
		return err == nil && st.State == inbox.StateSubmitted
	})
	if r := h.Run("seat", "cancel", h.Name); r.Code != exitOK {
		t.Fatalf("seat cancel: %s", r)
	}
	r = h.Run("seat", "send", h.Name, "--id", "c1", "--wait", "--timeout", "30s")
	if r.Code != exitFailed || !strings.Contains(r.Stderr, "cancelled") {
		t.Fatalf("waiting on the cancelled message: %s", r)
	}
	runHint(t, h, hintsOf(t, "a cancelled message", r)[0], "", exitOK)
	if st := h.Status("c1"); st.State == inbox.StateFailed {
		t.Fatalf("the retry hint did not re-queue c1: %+v", st)
	}
	if r := h.Run("seat", "cancel", h.Name); r.Code != exitOK && r.Code != exitFailed {
		t.Fatalf("seat cancel of the retried message: %s", r)
	}

	// Usage lines keep the whole command: pasted with a seat and an id they
	// are no usage error.
	for _, args := range [][]string{{"seat", "show", h.Name}, {"seat", "retry", "x"}, {"handoff", "show"}} {
		r := h.Run(args...)
		if r.Code != exitBadInput || !strings.Contains(r.Stderr, "usage: pantty") {
			t.Fatalf("pantty %s: want a usage line, got %s", strings.Join(args, " "), r)
		}
		runHint(t, h, hintsOf(t, "a usage line", r)[0], "w1", -1)
	}
}

// TestRecoverInstallWithoutCrontabSaysWhatIsMissing: no crontab program on
// PATH is one line naming it, not the exec package's words.
func TestRecoverInstallWithoutCrontabSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "nocron")
	bin := t.TempDir()
	if err := os.Symlink("/bin/true", filepath.Join(bin, "true")); err != nil {
		t.Fatal(err)
	}
	r := h.RunEnv(map[string]string{"PATH": bin}, "", "recover", "install", "--cron")
	if r.Code != exitFailed || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, "crontab is not installed") ||
		strings.Contains(r.Stderr, "exec:") || strings.Contains(r.Stderr, "$PATH") {
		t.Fatalf("recover install --cron without crontab: want exit 1 and one line naming crontab; got %s", r)
	}
}

// TestRecoverUninstallTakesCrontab: uninstall takes --crontab as install does,
// and runs that program to remove the line.
func TestRecoverUninstallTakesCrontab(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "cronflag")
	dir := t.TempDir()
	tab := filepath.Join(dir, "tab")
	fake := func(name string) string {
		p := filepath.Join(dir, name)
		script := "#!/bin/sh\necho \"$@\" >> " + filepath.Join(dir, name+".calls") + "\n" +
			"if [ \"$1\" = -l ]; then cat " + tab + " 2>/dev/null || { echo 'no crontab for u' >&2; exit 1; }; else cat > " + tab + "; fi\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := fake("crontab1"), fake("crontab2")
	if r := h.Run("recover", "install", "--cron", "--crontab", first); r.Code != 0 {
		t.Fatalf("recover install --cron --crontab: %s", r)
	}
	r := h.Run("recover", "uninstall", "--cron", "--crontab", second)
	if r.Code != 0 {
		t.Fatalf("recover uninstall --cron --crontab: want exit 0; got %s", r)
	}
	if calls, err := os.ReadFile(second + ".calls"); err != nil || !strings.Contains(string(calls), "-l") {
		t.Fatalf("recover uninstall --crontab %s did not run it (%v): %s", second, err, r)
	}
	if b, _ := os.ReadFile(tab); strings.Contains(string(b), "recover") {
		t.Fatalf("the crontab line is still there after uninstall:\n%s", b)
	}
}

// TestARefusalSaysItOnce: a start naming the wrong holder of a running seat
// is refused (exit 3) in one line that says the seat is held once, naming
// the holder.
func TestARefusalSaysItOnce(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "heldonce")
	h.Start()
	o := h.Owner()
	r := h.Run("seat", "start", h.Name, "--takeover", "h-00000000")
	t.Logf("%s", r.Stderr)
	said := strings.Count(r.Stderr, "owned by a live driver") + strings.Count(r.Stderr, "is held by")
	if r.Code != exitRefused || strings.Count(r.Stderr, "\n") != 1 || said != 1 || !strings.Contains(r.Stderr, o.Holder) {
		t.Fatalf("start --takeover of another holder: want exit 3 and one line saying once that %s holds the seat; got %s", o.Holder, r)
	}
}
