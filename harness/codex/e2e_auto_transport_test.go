package codex_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// TestAutoTransportRunsTheMeasuredPath measures the real Codex on both paths
// with `pantty measure contract --harness codex` (one battery per path, each
// stored with its path: contract.toml and contract-app-server.toml), then
// starts a seat with transport = "auto": it runs on the path those facts
// choose (the app server only when every row of its contract is met), a
// message goes through it, and status, seat show, session.toml and
// driver.log say which path and why. The app-server contract is then
// rewritten to the other answer (a compaction row unmet, or every row met),
// and the restarted seat runs its next message on the other path: both
// branches run whatever the installed version measures.
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
	r.runsOn(want, "auto-1")

	// The other answer: every row met, or the compaction row unmet.
	path := state.ContractPath(r.Home, "codex", codex.Version, config.TransportAppServer)
	c, _ := state.LoadContract(r.Home, "codex", codex.Version, config.TransportAppServer)
	for i := range c.Rows {
		c.Rows[i].Met = want == config.TransportTmux || c.Rows[i].Name != "compaction"
	}
	if err := fsatomic.WriteState(r.Home, path, c); err != nil {
		t.Fatal(err)
	}
	other := map[string]string{config.TransportTmux: config.TransportAppServer, config.TransportAppServer: config.TransportTmux}[want]
	r.runsOn(other, "auto-2")
}

// runsOn starts the auto seat, checks it says it runs on want (status's
// transport, session.toml's record, driver.log's reason), sends message id
// through it (processed once, seat show naming the path) and stops it.
func (r *rig) runsOn(want, id string) {
	r.T.Helper()
	r.Start()
	r.saysAuto(want)
	r.Send(id, "a message on the path auto chose")
	r.Processed(id)
	if n := r.Turns()[id]; n != 1 {
		r.T.Errorf("%s reached the model %d times on %s, want once", id, n, want)
	}
	if st := r.Status(id); want == config.TransportTmux && strings.HasPrefix(st.Evidence, "app-server") {
		r.T.Errorf("%s on tmux: evidence %q", id, st.Evidence)
	}
	if sh := r.Run("seat", "show", "cxauto", id); sh.Code != 0 || !regexp.MustCompile(`(?m)^transport\s+`+regexp.QuoteMeta(want+" (auto)")+`$`).MatchString(sh.Stdout) {
		r.T.Errorf("seat show does not name the path run, %s (auto): %s", want, sh)
	}
	if st := r.Run("seat", "stop", "cxauto"); st.Code != 0 {
		r.T.Fatalf("seat stop: %s", st)
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
}
