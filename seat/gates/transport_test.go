package gates

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// fakeCodex writes an executable that answers --version as Codex 0.171.0
// does, and returns its path.
func fakeCodex(t *testing.T, version string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "codex")
	if err := tmuxtest.WriteExecutable(bin, []byte("#!/bin/sh\necho 'codex-cli "+version+"'\n")); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestAutoTransportTakesTheMeasuredPath: transport = "auto" runs on the app
// server only when the harness has one, the seat may run on it, and the
// contract measured here on that path for the installed version has every
// row met within its dates; each other case falls back to tmux and says
// which condition was not met. Declared transports are themselves.
func TestAutoTransportTakesTheMeasuredPath(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	bin := fakeCodex(t, "0.171.0")
	codex := func(mod func(*config.Config)) config.Config {
		c := config.Config{Name: "auto", Harness: "codex", Shape: config.ShapeResident, Transport: config.TransportAuto, Command: bin}
		if mod != nil {
			mod(&c)
		}
		return c
	}
	allMet := t.TempDir()
	writeContractOn(t, allMet, "codex", "0.171.0", config.TransportAppServer, now.Add(-24*time.Hour))
	compactionUnmet := t.TempDir()
	writeContractOn(t, compactionUnmet, "codex", "0.171.0", config.TransportAppServer, now.Add(-24*time.Hour), "compaction")
	expired := t.TempDir()
	writeContractOn(t, expired, "codex", "0.171.0", config.TransportAppServer, now.Add(-100*24*time.Hour))
	stale := t.TempDir() // past revisit, before fail_after: still taken, and said
	writeContractOn(t, stale, "codex", "0.171.0", config.TransportAppServer, now.Add(-40*24*time.Hour))
	onlyTmux := t.TempDir() // the tmux path's contract, every row met, vouches nothing for the app server
	writeContractOn(t, onlyTmux, "codex", "0.171.0", "", now.Add(-24*time.Hour))
	otherVersion := t.TempDir()
	writeContractOn(t, otherVersion, "codex", "0.170.0", config.TransportAppServer, now.Add(-24*time.Hour))

	for _, c := range []struct {
		name, home string
		cfg        config.Config
		want       string
		why        string // a piece of the reason ("" for a declared transport)
	}{
		{"declared tmux", allMet, codex(func(c *config.Config) { c.Transport = config.TransportTmux }), config.TransportTmux, ""},
		{"declared app-server", t.TempDir(), codex(func(c *config.Config) { c.Transport = config.TransportAppServer }), config.TransportAppServer, ""},
		{"every row met", allMet, codex(nil), config.TransportAppServer, "every row of the app-server contract of codex 0.171.0 is met (measured here 2026-12-05)"},
		{"past revisit", stale, codex(nil), config.TransportAppServer, "past its revisit date"},
		{"no app server", allMet, config.Config{Name: "auto", Harness: "sim", Shape: config.ShapeResident, Transport: config.TransportAuto}, config.TransportTmux, "the only path of sim (it has no app server)"},
		{"turn shape", allMet, codex(func(c *config.Config) { c.Shape = config.ShapeTurn }), config.TransportTmux, "only a resident seat runs on it"},
		{"args", allMet, codex(func(c *config.Config) { c.Args = []string{"--oss"} }), config.TransportTmux, "args are flags of the TUI"},
		{"ladder", allMet, codex(func(c *config.Config) { c.Ladder = []config.Rung{{Name: "top"}, {Name: "low"}} }), config.TransportTmux, "a [[ladder]] is not supported"},
		{"version unknown", allMet, codex(func(c *config.Config) { c.Command = filepath.Join(t.TempDir(), "nowhere") }), config.TransportTmux, "version is unknown"},
		{"no contract", t.TempDir(), codex(nil), config.TransportTmux, "no app-server contract measured here for codex 0.171.0 (pantty measure contract --harness codex --transport app-server)"},
		{"only the tmux path measured", onlyTmux, codex(nil), config.TransportTmux, "no app-server contract measured here"},
		{"another version measured", otherVersion, codex(nil), config.TransportTmux, "no app-server contract measured here for codex 0.171.0"},
		{"a row unmet", compactionUnmet, codex(nil), config.TransportTmux, "is not met: compaction unmet (measured compaction)"},
		{"past fail_after", expired, codex(nil), config.TransportTmux, "past its fail_after"},
	} {
		got, why := ChooseTransport(c.home, c.cfg, now)
		if got != c.want || (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: %s (%q), want %s (%q)", c.name, got, why, c.want, c.why)
		}
		if c.cfg.Transport == config.TransportAuto && !strings.HasPrefix(why, "auto: "+got+":") {
			t.Errorf("%s: the reason %q does not start by naming the path taken", c.name, why)
		}
	}
}

// TestAppServerPathIsJudgedByItsOwnContract: the app-server verdict never
// borrows the registry's tmux rows: unmeasured it fails every gate naming
// the command that measures it; measured, each gate is judged by its rows
// (an unmet compaction fails the compaction gate), and the dispatch gate by
// the submit row (turn/start carries the text as data).
func TestAppServerPathIsJudgedByItsOwnContract(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	home := t.TempDir()
	v := LocalOn(home, "codex", "0.171.0", config.TransportAppServer, now)
	if v.Transport != config.TransportAppServer || v.ResidentAllowed || !strings.Contains(v.Gate("submit").Reason+v.Gate("compaction").Reason, "on the app-server path") ||
		!strings.Contains(v.Gate("compaction").Fix, "pantty measure contract --harness codex --transport app-server") {
		t.Fatalf("unmeasured app-server path: %+v", v)
	}
	if want := "not measured on this machine: pantty measure contract --harness codex --transport app-server"; !strings.HasPrefix(v.Summary, want) {
		t.Fatalf("the unmeasured app-server path's summary %q, want it to start %q", v.Summary, want)
	}
	if tm := Local(home, "codex", "0.171.0", now); tm.Transport != config.TransportTmux || !tm.ResidentAllowed {
		t.Fatalf("the tmux path on the registry's rows: %s %s", tm.Transport, tm.Summary)
	}

	writeContractOn(t, home, "codex", "0.171.0", config.TransportAppServer, now.Add(-24*time.Hour), "compaction")
	v = LocalOn(home, "codex", "0.171.0", config.TransportAppServer, now)
	if g := v.Gate("compaction"); g.Status != Fail || !strings.Contains(g.Evidence[0].Source, "on the app-server path") {
		t.Errorf("compaction unmet on the app-server path: %s %q %+v", g.Status, g.Reason, g.Evidence)
	}
	if g := v.Gate("cancel"); g.Status != Pass {
		t.Errorf("cancel met on the app-server path: %s %q", g.Status, g.Reason)
	}
	if g := v.Gate("dispatch"); g.Status != Pass || !strings.Contains(g.Reason, "turn/start carries the board text as data") || g.Evidence[0].Row != "dispatch" {
		t.Errorf("dispatch on the app-server path: %s %q", g.Status, g.Reason)
	}
	if !strings.Contains(v.VersionNote, "contract-app-server.toml") {
		t.Errorf("version note %q does not name the app-server contract", v.VersionNote)
	}
	// The tmux verdict is untouched by the app-server file.
	if tm := Local(home, "codex", "0.171.0", now); tm.Gate("compaction").Status != Pass {
		t.Errorf("the app-server contract leaked into the tmux verdict: %s", tm.Gate("compaction").Reason)
	}
}

// TestGatesNamesThePathOfEachVerdict: `pantty gates codex` judges both
// paths, each verdict saying its path and what auto takes; --json carries
// the path (an array for a harness with two, one object for one with one);
// the summary has a line per harness and path.
func TestGatesNamesThePathOfEachVerdict(t *testing.T) {
	h := seattest.New(t, "paths")
	writeContractOn(t, h.Home, "codex", "0.171.0", config.TransportAppServer, time.Now().Add(-time.Hour), "compaction")

	r := h.Run("gates", "codex", "--version", "0.171.0")
	for _, want := range []string{"codex 0.171.0 on the tmux path: resident allowed", "codex 0.171.0 on the app-server path: not on this path: run the seat on tmux (failing: compaction)",
		"transport  app-server", `auto       transport = "auto" takes tmux: auto: tmux: the app-server contract of codex 0.171.0`} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("pantty gates codex does not say %q:\n%s", want, r)
		}
	}
	j := h.Run("gates", "codex", "--version", "0.171.0", "--json")
	var vs []Verdict
	if err := json.Unmarshal([]byte(j.Stdout), &vs); err != nil || len(vs) != 2 || vs[0].Transport != config.TransportTmux || vs[1].Transport != config.TransportAppServer {
		t.Fatalf("pantty gates codex --json: %v\n%s", err, j)
	}
	var one Verdict
	if j := h.Run("gates", "sim", "--json"); json.Unmarshal([]byte(j.Stdout), &one) != nil || one.Transport != config.TransportTmux {
		t.Fatalf("pantty gates sim --json: one object naming tmux:\n%s", j)
	}
	s := h.Run("gates")
	lines := strings.Split(s.Stdout, "\n")
	if !strings.Contains(lines[0], " TRANSPORT ") || !strings.HasPrefix(lines[3], "codex ") || !strings.Contains(lines[3], " tmux ") ||
		!strings.HasPrefix(lines[4], "codex ") || !strings.Contains(lines[4], " app-server ") {
		t.Fatalf("summary: a line per harness and path:\n%s", s)
	}
}
