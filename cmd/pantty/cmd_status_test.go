package main

// What a person sees at a terminal: status fitted to its width, a stopped seat
// shown as stopped, a pending `seat done`, progress while a probe waits, and
// followers that end when their reader goes away. A terminal is a pane of a
// second private tmux server; its screen is read with capture-pane.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// onTerminal runs pantty with args in a width-column pane and returns its
// screen once the command has exited.
func onTerminal(t *testing.T, h *seattest.Harness, width int, args ...string) string {
	t.Helper()
	srv := tmuxtest.Server(t)
	done := filepath.Join(h.Work, "term-done")
	os.Remove(done)
	// The pane stays alive after the command (tmux's "Pane is dead" line would
	// scroll the screen) until the session is killed below.
	script := `"$0" "$@"; echo $? > ` + done + `; exec sleep 600`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pane, err := srv.NewSession(ctx, tmux.NewSessionOpts{Name: "term", Width: width, Height: 50,
		Env:  []string{"PANTTY_HOME=" + h.Home, "PANTTY_TMUX_SOCKET=" + h.Socket, "NO_COLOR=1"},
		Argv: append([]string{"sh", "-c", script, h.Bin}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the command in the terminal to exit", 60*time.Second, func() bool {
		_, err := os.Stat(done)
		return err == nil
	})
	screen, err := srv.Capture(ctx, pane.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.KillSession(ctx, "term"); err != nil {
		t.Fatal(err)
	}
	return screen
}

func TestStatusOnATerminalFitsAndShowsAStoppedSeat(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "shown")
	h.Start()
	h.Send("m1", "one message")
	h.WaitFinal(30*time.Second, "m1")
	stopHolder := ""
	if r := h.Run("seat", "stop", h.Name); r.Code != 0 {
		t.Fatal(r)
	}
	if o, err := h.Seat().OwnerFile().Read(); err == nil {
		stopHolder = o.Holder // what seat stop itself recorded while tearing down
	}
	if r := h.Run("seat", "done", h.Name); r.Code != 0 {
		t.Fatal(r)
	}

	screen := onTerminal(t, h, 80, "status")
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for _, l := range lines {
		if utf8.RuneCountInString(strings.TrimRight(l, " ")) > 80 {
			t.Fatalf("a status line is wider than the 80-column terminal:\n%s", screen)
		}
	}
	for _, want := range []string{"SEAT", "HEALTH", "INTENT", "PHASE", "stopped", "DONE", "pending"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("status on an 80-column terminal lacks %q:\n%s", want, screen)
		}
	}
	wide := onTerminal(t, h, 80, "status", "-o", "wide")
	for _, want := range []string{"SESSION", "CURSOR", "RUNG", "CYCLE", "none (stopped)"} {
		if !strings.Contains(wide, want) {
			t.Fatalf("status -o wide lacks %q:\n%s", want, wide)
		}
	}
	for _, bad := range []string{"stale: stopping", "gone " + stopHolder} {
		if stopHolder != "" && strings.Contains(wide, bad) {
			t.Fatalf("a stopped seat shows %q:\n%s", bad, wide)
		}
	}
	// The JSON document carries the pending done as a reading.
	r := h.Run("status", "--json", h.Name)
	var doc struct {
		Seats []struct {
			Done struct {
				State   string
				Pending *bool
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || len(doc.Seats) != 1 || doc.Seats[0].Done.Pending == nil || !*doc.Seats[0].Done.Pending {
		t.Fatalf("status --json done: %v %s", err, r)
	}
}

func TestProbeShowsProgressOnATerminalOnly(t *testing.T) {
	t.Parallel()
	// A turn long enough that the in-turn phase is on screen for a while.
	h := seattest.New(t, "slowprobe", seattest.Env(map[string]string{"PANTTY_SIM_TURN": "1s"}))
	h.Start()
	screen := onTerminal(t, h, 120, "seat", "probe", h.Name)
	if !strings.Contains(screen, "in-turn") || !strings.Contains(screen, "a model turn ran") {
		t.Fatalf("probe on a terminal shows no progress:\n%s", screen)
	}
	r := h.Run("seat", "probe", h.Name)
	if r.Code != 0 || strings.Contains(r.Stderr, "in-turn") {
		t.Fatalf("probe off a terminal: want the answer only, got %s", r)
	}
}

// TestFollowersEndWhenTheirReaderGoesAway: watch and events --follow print
// nothing while nothing changes, yet exit once the pipe's reader is closed.
func TestFollowersEndWhenTheirReaderGoesAway(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "piped")
	h.Send("p1", "something for events to print")
	for _, args := range [][]string{{"watch"}, {"events", "--follow", "--settle", "10ms"}} {
		cmd := exec.Command(h.Bin, args...)
		cmd.Env = h.Env()
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = wr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wr.Close()
		buf := make([]byte, 4096)
		if n, err := rd.Read(buf); err != nil || n == 0 { // the first line: the follower is up
			t.Fatalf("%v: no first line: %v", args, err)
		}
		rd.Close()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("pantty %v after its reader closed: %v (want exit 0)", args, err)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("pantty %v still runs 30s after its reader closed", args)
		}
	}
}

// TestStatusFitsAPipe: off a terminal the table keeps to $COLUMNS, else 120
// characters (every column is about 300); -o wide still prints them all.
func TestStatusFitsAPipe(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "piped")
	fits := func(r seattest.Result, width int) {
		t.Helper()
		for _, l := range strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Fatalf("a status line of %d characters in a pipe, want at most %d:\n%s", n, width, r.Stdout)
			}
		}
		if r.Code != 0 || !strings.Contains(r.Stdout, "HEALTH") || !strings.Contains(r.Stdout, "PHASE") {
			t.Fatalf("status in a pipe lacks the first columns: %s", r)
		}
	}
	fits(h.Run("status"), 120)
	fits(h.RunEnv(map[string]string{"COLUMNS": "70"}, "", "status"), 70)
	if r := h.Run("status", "-o", "wide"); !strings.Contains(r.Stdout, "ISOL") || !strings.Contains(r.Stdout, "CYCLE") {
		t.Fatalf("status -o wide in a pipe lacks columns: %s", r)
	}
}

// TestStatusNamesABadSeatToml: a seat whose seat.toml does not parse says so
// in words a person acts on, `bad seat.toml`, where a bare `error` stood: in
// HEALTH for a seat that never started (so 80 columns show it) and in WAITS
// (its providers come from seat.toml) where that column fits.
func TestStatusNamesABadSeatToml(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "badtoml")
	f, err := os.OpenFile(h.Seat().ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("bogus = [\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, width := range []int{80, 120} {
		r := h.RunEnv(map[string]string{"COLUMNS": fmt.Sprint(width)}, "", "status")
		lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
		if r.Code != 0 || len(lines) != 2 || strings.Contains(r.Stdout, "error") {
			t.Fatalf("status at %d columns: want a header and one row, no bare error; got %s", width, r)
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > width {
				t.Fatalf("a status line wider than %d columns:\n%s", width, r.Stdout)
			}
		}
		if health := strings.Index(lines[0], "HEALTH"); !strings.HasPrefix(lines[1][health:], "bad seat.toml ") {
			t.Errorf("HEALTH at %d columns is not bad seat.toml:\n%s", width, r.Stdout)
		}
		if waits := strings.Index(lines[0], "WAITS"); width == 120 && (waits < 0 || !strings.HasPrefix(lines[1][waits:], "bad seat.toml ")) {
			t.Errorf("WAITS at %d columns is not bad seat.toml:\n%s", width, r.Stdout)
		}
	}
}
