package codex_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// TestAutoTransportRunsTheMeasuredPath measures the real Codex on both paths
// with `pantty measure contract --harness codex` (one battery per path, each
// stored with its path: contract.toml and contract-app-server.toml), then
// starts a seat with transport = "auto": it runs on the path those facts
// choose (the app server only when every row of its contract is met), and
// status, seat show, session.toml and driver.log say which and why. The
// app-server contract is then rewritten with every row met — the branch the
// measured facts may not reach today — and the restarted seat runs its
// message on the app server, "app-server (auto)".
func TestAutoTransportRunsTheMeasuredPath(t *testing.T) {
	r := newRig(t, "cxauto", `transport = "auto"`)
	bin := codexBinary(t)
	t0 := time.Now()
	m := r.Run("measure", "contract", "--harness", "codex", "--bin", bin)
	t.Logf("measure contract --harness codex (both paths): exit %d in %s\n%s", m.Code, time.Since(t0).Round(time.Second), m.Stdout)
	if m.Code != 0 && m.Code != 1 {
		t.Fatalf("measure contract: %s", m)
	}
	met := map[string]bool{}
	for _, on := range []string{config.TransportTmux, config.TransportAppServer} {
		c, err := state.LoadContract(r.Home, "codex", codex.Version, on)
		if err != nil || c.On() != on || len(c.Rows) != len(state.ContractRows) || !strings.Contains(m.Stdout, "on the "+on+" path: contract measured") {
			t.Fatalf("the %s path's contract: %+v, %v", on, c, err)
		}
		met[on] = true
		for _, row := range c.Rows {
			met[on] = met[on] && row.Met
		}
	}
	if !met[config.TransportTmux] {
		t.Errorf("the tmux path's contract has a row not met on %s: %s", codex.Version, m.Stdout)
	}

	want := config.TransportTmux
	if met[config.TransportAppServer] {
		want = config.TransportAppServer
	}
	r.Start()
	r.saysAuto(want)
	if st := r.Run("seat", "stop", "cxauto"); st.Code != 0 {
		t.Fatalf("seat stop: %s", st)
	}

	// Every row met on the app-server path: auto takes it.
	path := state.ContractPath(r.Home, "codex", codex.Version, config.TransportAppServer)
	c, _ := state.LoadContract(r.Home, "codex", codex.Version, config.TransportAppServer)
	for i := range c.Rows {
		c.Rows[i].Met = true
	}
	if err := fsatomic.WriteState(r.Home, path, c); err != nil {
		t.Fatal(err)
	}
	r.Start()
	r.saysAuto(config.TransportAppServer)
	r.Send("auto-1", "a message on the path auto chose")
	r.Processed("auto-1")
	if st := r.Status("auto-1"); st.State != inbox.StateProcessed || r.Turns()["auto-1"] != 1 {
		t.Errorf("auto-1 on the app server: %+v, %d model turns", st, r.Turns()["auto-1"])
	}
	if sh := r.Run("seat", "show", "cxauto", "auto-1"); sh.Code != 0 || !regexp.MustCompile(`(?m)^transport\s+app-server \(auto\)$`).MatchString(sh.Stdout) {
		t.Errorf("seat show names the path run: %s", sh)
	}
	if st := r.Run("seat", "stop", "cxauto"); st.Code != 0 {
		t.Fatalf("seat stop: %s", st)
	}
}

// saysAuto checks that the running auto seat says it runs on want: status's
// transport, session.toml's record and driver.log's reason.
func (r *rig) saysAuto(want string) {
	r.T.Helper()
	if st := r.Run("status", "cxauto"); st.Code != 0 || !regexp.MustCompile(`(?m)^\s*transport\s+`+regexp.QuoteMeta(want+" (auto)")+`\s*$`).MatchString(st.Stdout) {
		r.T.Errorf("status cxauto does not say %s (auto): %s", want, st)
	}
	sess := r.Session()
	if sess.Transport != want || !strings.HasPrefix(sess.TransportWhy, "auto: "+want+": ") {
		r.T.Errorf("session.toml: transport %q, why %q; want %s", sess.Transport, sess.TransportWhy, want)
	}
	if log := r.DriverLog(); !strings.Contains(log, `transport = "auto": auto: `+want+": ") {
		r.T.Errorf("driver.log does not say why auto took %s:\n%s", want, log)
	}
	if want == config.TransportAppServer && r.ServerRunning() {
		r.T.Error("an auto seat on the app server started a tmux server before its first turn")
	}
	if _, err := os.Stat(r.Seat().DriverLogPath()); err != nil {
		r.T.Error(err)
	}
}
