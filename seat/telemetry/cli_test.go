package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/seat/telemetry"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// runPantty runs the built binary against home with a PATH whose only tmux is
// a trap: if the command ran tmux at all, the trap leaves a marker file.
func runPantty(t *testing.T, home string, args ...string) (stdout string, code int, trapped bool) {
	t.Helper()
	bin := seattest.Binary(t)
	trapDir := t.TempDir()
	marker := filepath.Join(trapDir, "tmux-was-called")
	trap := "#!/bin/sh\necho \"$@\" >> " + marker + "\nexit 1\n"
	if err := tmuxtest.WriteExecutable(filepath.Join(trapDir, "tmux"), []byte(trap)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + trapDir, "HOME=" + t.TempDir(), config.HomeEnv + "=" + home,
		"PANTTY_TMUX_SOCKET=" + filepath.Join(trapDir, "no-server")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("pantty %v: exit %d\n%s", args, code, errb.String())
	}
	_, statErr := os.Stat(marker)
	return out.String(), code, statErr == nil
}

func TestStatusCommandReadsFilesOnlyWithNoTmux(t *testing.T) {
	f := newFixture(t)
	s := f.seat("cli", `model = "declared-a"`)
	session(t, s, "sess-cli")
	heartbeat(t, s, time.Now().UTC(), "idle")
	write(t, s, contextPath(s), state.Context{SessionID: "sess-cli", Occupancy: 30000, Floor: 12000, Reclaimable: 18000,
		Window: 200000, Source: "status line", FloorSource: "first request", ReadAt: time.Now().UTC(), Model: "recorded-b"})
	before := tree(t, f.home)

	out, code, trapped := runPantty(t, f.home, "status", "--json", "cli")
	if code != 0 || trapped {
		t.Fatalf("status --json: exit %d, tmux called: %v\n%s", code, trapped, out)
	}
	var doc telemetry.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("status --json is not the document: %v\n%s", err, out)
	}
	if doc.Version != telemetry.Version || len(doc.Seats) != 1 {
		t.Fatalf("document: %+v", doc)
	}
	r := doc.Seats[0]
	if *r.Heartbeat.Phase != "idle" || *r.Model.Value != "recorded-b" || *r.Context.Floor != 12000 {
		t.Errorf("row: phase %v model %v floor %v", *r.Heartbeat.Phase, *r.Model.Value, *r.Context.Floor)
	}

	for _, args := range [][]string{{"status"}, {"status", "cli"}, {"status", "--format", "prom"}, {"status", "cli", "--format", "table"}} {
		out, code, trapped := runPantty(t, f.home, args...)
		if code != 0 || trapped {
			t.Errorf("%v: exit %d, tmux called %v", args, code, trapped)
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%v: colour on a pipe:\n%s", args, out)
		}
		if strings.Contains(out, "declared-a") {
			t.Errorf("%v: seat.toml's model in the output:\n%s", args, out)
		}
	}
	if out, _, _ := runPantty(t, f.home, "status"); !strings.Contains(out, "HEALTH") || !strings.Contains(out, "unknown (no recover verdict)") {
		t.Errorf("table:\n%s", out)
	}
	if out, _, _ := runPantty(t, f.home, "status", "cli"); !strings.Contains(out, "bound: context.toml session_id matches") {
		t.Errorf("detail view lacks the bindings:\n%s", out)
	}
	if _, code, _ := runPantty(t, f.home, "status", "nobody"); code != 5 {
		t.Errorf("unknown seat: exit %d, want 5 (not found)", code)
	}
	if _, code, _ := runPantty(t, f.home, "status", "--format", "xml"); code != 2 {
		t.Errorf("bad format: exit %d, want 2", code)
	}
	if after := tree(t, f.home); after != before {
		t.Errorf("status changed the state directory")
	}
}

func TestWatchCommandIsBoundedByFor(t *testing.T) {
	f := newFixture(t)
	s := f.seat("wcli")
	heartbeat(t, s, time.Now().UTC(), "idle")
	start := time.Now()
	out, code, trapped := runPantty(t, f.home, "watch", "--json", "--for", "300ms")
	if code != 0 || trapped {
		t.Fatalf("watch: exit %d, tmux called %v", code, trapped)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("watch --for 300ms ran %s", d)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	var lines []telemetry.Change
	for sc.Scan() {
		var c telemetry.Change
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("watch --json line %q: %v", sc.Text(), err)
		}
		lines = append(lines, c)
	}
	if len(lines) != 1 || !lines[0].Initial || lines[0].Seat != "wcli" || lines[0].Version != telemetry.Version {
		t.Errorf("watch --json lines: %+v", lines)
	}
}

// TestStatusOfARunningSimSeat is the end-to-end reading: a real driver and the
// simulator in a private tmux server; status reads only what they recorded.
func TestStatusOfARunningSimSeat(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a seat")
	}
	h := seattest.New(t, "live")
	h.Start()
	h.Send("m1", "hello")
	h.WaitFinal(30*time.Second, "m1")
	s := h.Seat()
	h.WaitFor("a context reading with a floor", 30*time.Second, func() bool {
		c, err := s.ContextFile().Read()
		return err == nil && c.FloorSource != ""
	})

	r := h.Run("status", "--json", "live")
	if r.Code != 0 {
		t.Fatalf("status: %s", r)
	}
	var doc telemetry.Document
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	row := doc.Seats[0]
	sess := h.Session()
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s\n%s", what, r.Stdout)
		}
	}
	check("phase idle", row.Heartbeat.State == telemetry.Known && *row.Heartbeat.Phase == "idle")
	check("session id "+sess.ID, row.Session.ID != nil && *row.Session.ID == sess.ID && row.Session.ConfirmedBy != nil)
	check("pantty-chosen session", strings.Contains(row.Session.Bound, "pantty-chosen id"))
	check("inbox depth 0", row.Inbox.Depth != nil && *row.Inbox.Depth == 0)
	check("model sim-1 from the harness", row.Model.Value != nil && *row.Model.Value == "sim-1" && !strings.Contains(row.Model.Bound, "seat.toml"))
	check("context with a floor", row.Context.IsKnown() && row.Context.Floor != nil && *row.Context.Floor > 0)
	check("cursor at m1", row.Cursor.ID != nil && *row.Cursor.ID == "m1")
	check("driver live", row.Driver.Live != nil && *row.Driver.Live)
	check("a last turn end", row.LastTurnEnd.State == telemetry.Known)
	check("health unknown without recover", row.Health.State == telemetry.Unknown)
}
