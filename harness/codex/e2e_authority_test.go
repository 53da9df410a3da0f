package codex_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/state"
)

// codexHomeOutsideTmp is a private CODEX_HOME outside /tmp: Codex 0.171.0
// refuses to create its sandbox helper links under a temporary directory, and
// every sandboxed command then fails (TestCodexSandboxUnderTmpIsDetected).
func codexHomeOutsideTmp(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "pantty-codex-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// isolate makes r's seat one that pantty isolates (auto finds Codex's
// sandbox working): its CODEX_HOME moves outside /tmp
// (codexHomeOutsideTmp), with the stand-in's provider, and the rig's
// permission_mode = "danger-full-access" goes.
func isolate(t *testing.T, r *rig) {
	t.Helper()
	home := codexHomeOutsideTmp(t)
	s := r.Seat()
	cfgText, _ := os.ReadFile(s.ConfigPath())
	// env is an inline table (seat init writes env = { … }): the new key goes in with a comma.
	text := strings.Replace(string(cfgText), "STANDIN_API_KEY = ", fmt.Sprintf("CODEX_HOME = %q, STANDIN_API_KEY = ", home), 1)
	text = strings.Replace(text, `permission_mode = "danger-full-access"`, "", 1)
	if err := os.WriteFile(s.ConfigPath(), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := codex.WriteProvider(home, "standin", r.api.URL()+"/v1", "STANDIN_API_KEY", model); err != nil {
		t.Fatal(err)
	}
}

// With isolation on (auto, where Codex's sandbox runs), pantty's permission
// profile keeps $PANTTY_HOME from the model's commands: a canary in seat.toml
// is not readable, another seat's control/ and seat.toml are not writable,
// while the workdir is (the control) and the seat's own drop directory takes
// a request. A board mention of seat.toml brings nothing into the request:
// Codex 0.171.0 does not expand @-mentions in pasted text at all (the control
// file in the workdir stays out too). The model's shell tool (exec_command, run
// by the real TUI) cannot read seat.toml or write another seat's files, can read
// the workdir, and `pantty handoff note` from inside reaches the seat's handoff.
func TestCodexProfileKeepsPanttyHomeOutOfReach(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-reach")
	const canary = "PANTTY-CANARY-cx-51d2"
	s := r.Seat()
	isolate(t, r)
	f, err := os.OpenFile(s.ConfigPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "# %s\n", canary)
	f.Close()
	other, _ := state.Open(r.Home, "other")
	if err := seat.InitConfig(other, "sim", r.Work, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(other.ConfigPath())
	otherDrop := state.DropDir(other)
	if err := os.MkdirAll(otherDrop, 0o700); err != nil {
		t.Fatal(err)
	}
	const control = "CONTROL-CANARY-cx-77ab"
	if err := os.WriteFile(filepath.Join(r.Work, "outside.txt"), []byte(control+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Start()
	a, err := s.AuthorityFile().Read()
	if err != nil || !a.On() {
		t.Fatalf("authority.toml %+v (%v): want isolation on", a, err)
	}

	r.Send("x-seat", "look at @"+s.ConfigPath())
	r.Send("x-control", "look at @"+filepath.Join(r.Work, "outside.txt"))
	r.Processed("x-seat", "x-control")
	for _, q := range r.api.Requests() {
		if strings.Contains(q.NewInput+q.Context, canary) {
			t.Errorf("seat.toml's content reached the model through a mention")
		}
		if strings.Contains(q.NewInput+q.Context, control) {
			t.Logf("Codex expanded a mention of a workdir file: %q", q.NewInput)
		}
	}

	// The model's own shell tool (exec_command, Codex's only way to read a
	// file), run by the real TUI under the profile.
	cmd := fmt.Sprintf("cat %s; echo read=$?; cat outside.txt; echo work=$?; echo forged > %s/stop.toml; echo control=$?; "+
		"echo 'command = \"/bin/true\"' >> %s; echo seattoml=$?; kill -TERM %d; echo kill=$?; "+
		"echo x > %s/planted.req; echo otherdrop=$?; "+
		"F=CX-FORGED; %s --home %s hook --seat %s --codex-notify \"{\\\"type\\\":\\\"agent-turn-complete\\\",\\\"last-assistant-message\\\":\\\"${F}-TURN\\\"}\"; "+
		"%s handoff note 'CX-NOTE-CANARY from inside'; echo drop=$?",
		s.ConfigPath(), other.ControlDir(), other.ConfigPath(), r.Owner().PID, otherDrop, r.Bin, r.Home, s.Name, r.Bin)
	r.Send("x-tool", "run it\n[standin:bash="+cmd)
	r.Processed("x-tool")
	var out string
	for _, q := range r.api.Requests() {
		if q.Kind == "tool_result" {
			out += q.ToolOutput
		}
	}
	t.Logf("exec_command output under pantty's profile:\n%s", out)
	notes, _ := filepath.Glob(filepath.Join(s.HandoffDir(), "notes", "*.md"))
	noted := false
	for _, n := range notes {
		b, _ := os.ReadFile(n)
		noted = noted || strings.Contains(string(b), "CX-NOTE-CANARY from inside")
	}
	if !noted {
		t.Errorf("pantty handoff note from inside did not reach the seat's handoff\ndriver.log:\n%s", r.DriverLog())
	}
	if strings.Contains(out, canary) || strings.Contains(out, "read=0") {
		t.Errorf("the sandboxed command read seat.toml")
	}
	if !strings.Contains(out, control) {
		t.Errorf("control: the sandboxed command could not read the workdir")
	}
	for _, k := range []string{"control", "seattoml", "kill", "otherdrop"} {
		if strings.Contains(out, k+"=0") || !strings.Contains(out, k+"=") {
			t.Errorf("%s: the write or signal was not refused", k)
		}
	}
	if ents, _ := os.ReadDir(otherDrop); len(ents) != 0 {
		t.Errorf("the other seat's drop directory holds %d file(s)", len(ents))
	}
	// A forged notify (a turn end) from the sandboxed command is not recorded;
	// the same call from outside the sandbox is (the control).
	forged := func() bool {
		for _, dir := range []string{s.EventsDir(), s.SeenDir()} {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); strings.Contains(string(b), "CX-FORGED-TURN") {
					return true
				}
			}
		}
		return false
	}
	if forged() {
		t.Errorf("the sandboxed command recorded a hook event for its own seat")
	}
	if res := r.Run("hook", "--seat", s.Name, "--codex-notify", `{"type":"agent-turn-complete","last-assistant-message":"CX-FORGED-TURN"}`); res.Code != 0 || !forged() {
		t.Errorf("control: the forged notify from outside the sandbox was not recorded (%s)", res)
	}
	if _, live, _ := s.LiveOwner(); !live {
		t.Error("the seat's driver died: the model's shell signalled it")
	}
	if !strings.Contains(out, "drop=0") {
		t.Errorf("pantty handoff note through the drop directory failed")
	}
	if after, _ := os.ReadFile(other.ConfigPath()); string(after) != string(before) {
		t.Errorf("the other seat's seat.toml changed")
	}
}

// Where Codex's sandbox cannot run, auto detects it and says why instead of
// reporting a seat isolated: with CODEX_HOME under /tmp (this seat's default in
// tests), `codex sandbox -- true` fails on 0.171.0, and isolation = "on" refuses
// to launch.
func TestCodexSandboxUnderTmpIsDetected(t *testing.T) {
	t.Parallel()
	r := newRig(t, "cx-detect")
	s := r.Seat()
	cfg, err := s.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.PermissionMode = ""
	if !strings.HasPrefix(codex.Home(s, cfg), os.TempDir()) {
		t.Skipf("CODEX_HOME %s is not under %s", codex.Home(s, cfg), os.TempDir())
	}
	env := map[string]string{"PATH": os.Getenv("PATH")}
	a, err := harness.ResolveAuthority(codex.Adapter{}, s, cfg, env, time.Now())
	if err != nil || a.Isolation != config.IsolationUnavailable || !strings.Contains(a.Why, "codex sandbox") {
		t.Fatalf("auto: %+v (%v): want unavailable naming the failed probe", a, err)
	}
	t.Logf("why: %s", a.Why)
	cfg.Authority.Isolation = config.IsolationOn
	if _, err := harness.ResolveAuthority(codex.Adapter{}, s, cfg, env, time.Now()); err == nil {
		t.Fatal("isolation = \"on\" with no working sandbox did not refuse")
	}
}
