package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadline bounds every wait in these tests; generous because tests run in
// parallel on small machines.
const deadline = 10 * time.Second

// hookEvents are the events the default test settings record.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "Stop", "StopFailure",
	"PreCompact", "PostCompact", "SessionEnd", "Notification"}

// simEnv is one test's world: a state dir, a hook output dir, a work dir
// (the sim's cwd) and the settings every hook writes its payload from.
type simEnv struct {
	t        *testing.T
	root     string
	state    string
	hookDir  string
	work     string
	override map[string]string // event -> hook command; "{SOCK}" is replaced
	env      map[string]string
}

func newSimEnv(t *testing.T) *simEnv {
	t.Helper()
	root := t.TempDir()
	e := &simEnv{t: t, root: root, state: filepath.Join(root, "state"), hookDir: filepath.Join(root, "hooks"),
		work: filepath.Join(root, "work"), override: map[string]string{}}
	for _, d := range []string{e.hookDir, e.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.env = map[string]string{
		"PANTTY_SIM_CHILD":   "1",
		"PANTTY_SIM_STATE":   e.state,
		"PANTTY_SIM_STARTUP": "50ms",
		"PANTTY_SIM_COMMIT":  "20ms",
		"PANTTY_SIM_TURN":    "100ms",
		"PANTTY_SIM_ESC":     "20ms",
		"HOME":               root,
	}
	return e
}

// record is the shell snippet that stores a hook payload as a file named so
// that a plain sort gives the firing order.
func (e *simEnv) record(event string) string {
	return fmt.Sprintf("cat > '%s'/$(date +%%s%%N)-%s.json", e.hookDir, event)
}

// writeSettings renders the Claude-shaped settings file for a socket.
func (e *simEnv) writeSettings(sock string) string {
	hooks := map[string]any{}
	for _, ev := range hookEvents {
		cmd := e.record(ev)
		if ev == "SessionStart" {
			// Stores the payload and prints "ctx:<source>" for injection.
			cmd = fmt.Sprintf(`p=$(cat); printf '%%s' "$p" > '%s'/$(date +%%s%%N)-SessionStart.json; `+
				`printf 'ctx:%%s\n' "$(printf '%%s' "$p" | sed -n 's/.*"source":"\([a-z]*\)".*/\1/p')"`, e.hookDir)
		}
		if o, ok := e.override[ev]; ok {
			cmd = strings.ReplaceAll(o, "{SOCK}", sock)
		}
		hooks[ev] = []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	s := map[string]any{"hooks": hooks, "statusLine": map[string]any{"type": "command",
		"command": e.record("Status") + "; echo status-ok"}}
	b, _ := json.Marshal(s)
	path := filepath.Join(e.root, "settings.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (e *simEnv) childEnv() []string {
	var out []string
	for k, v := range e.env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// pane is a sim running in its own private tmux server.
type pane struct {
	t    *testing.T
	sock string
	pid  int
}

// start runs the test binary as the simulator in a new private tmux server.
func (e *simEnv) start(args ...string) *pane {
	t := e.t
	t.Helper()
	f, err := os.CreateTemp("/tmp", "psim-*.s")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(f.Name())
	p := &pane{t: t, sock: f.Name()}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"new-session", "-d", "-s", "sim", "-x", "100", "-y", "30", "-c", e.work}
	for _, kv := range e.childEnv() {
		cmd = append(cmd, "-e", kv)
	}
	cmd = append(cmd, "--", self, "--settings", e.writeSettings(p.sock))
	p.tmux(append(cmd, args...)...)
	t.Cleanup(p.kill)
	fmt.Sscan(p.tmux("display-message", "-p", "-t", "sim", "#{pane_pid}"), &p.pid)
	return p
}

func (p *pane) tmuxIn(stdin string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-u", "-f", "/dev/null", "-S", p.sock}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (p *pane) tmux(args ...string) string { return p.tmuxIn("", args...) }

// kill stops the private server and waits for the sim to be gone, so its
// SessionEnd hook does not write into a temp dir being removed.
func (p *pane) kill() {
	exec.Command("tmux", "-S", p.sock, "kill-server").Run()
	p.waitExit()
	os.Remove(p.sock)
}

func (p *pane) waitExit() {
	if p.pid <= 0 {
		return
	}
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if syscall.Kill(p.pid, 0) != nil {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid)); err == nil {
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *pane) capture() string {
	return p.tmux("capture-pane", "-p", "-t", "sim")
}

// waitScreen polls the pane until cond holds.
func (p *pane) waitScreen(what string, cond func(screen string) bool) string {
	p.t.Helper()
	end := time.Now().Add(deadline)
	var s string
	for time.Now().Before(end) {
		s = p.capture()
		if cond(s) {
			return s
		}
		time.Sleep(15 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
	return ""
}

// inputBox reads the input box from a screen: the lines between the two
// horizontal rules, without their two-character prefix.
func inputBox(screen string) (string, bool) {
	lines := strings.Split(screen, "\n")
	var rules []int
	for i, l := range lines {
		if strings.HasPrefix(l, "────") {
			rules = append(rules, i)
		}
	}
	if len(rules) < 2 {
		return "", false
	}
	var box []string
	for _, l := range lines[rules[0]+1 : rules[1]] {
		if len(l) >= 2 {
			l = l[2:]
		} else {
			l = ""
		}
		box = append(box, l)
	}
	return strings.Join(box, "\n"), true
}

func (p *pane) waitBox(want string) {
	p.t.Helper()
	p.waitScreen(fmt.Sprintf("input box %q", want), func(s string) bool {
		b, ok := inputBox(s)
		return ok && b == want
	})
}

// paste delivers text the way pantty does: tmux load-buffer, then
// paste-buffer -p (bracketed only if the application asked for it).
func (p *pane) paste(text string) {
	p.tmuxIn(text, "load-buffer", "-b", "t", "-")
	p.tmux("paste-buffer", "-p", "-d", "-b", "t", "-t", "sim")
}

func (p *pane) keys(keys ...string) {
	p.tmux(append([]string{"send-keys", "-t", "sim"}, keys...)...)
}

// submit pastes text, waits until it shows in the box and the paste has
// committed, then presses Enter.
func (p *pane) submit(text string) {
	p.t.Helper()
	p.paste(text)
	p.waitBox(shownBox(text))
	time.Sleep(60 * time.Millisecond)
	p.keys("Enter")
}

// shownBox is what inputBox reads back for text in a 100-column pane (long
// boxes are wrapped and cut by the renderer).
func shownBox(text string) string {
	var out []string
	for _, l := range boxLines(text, 100) {
		out = append(out, strings.TrimRight(l[2:], " "))
	}
	return strings.Join(out, "\n")
}

// hooks returns the payloads recorded for event, in firing order; ok is
// false while one of them is still being written.
func (e *simEnv) hooks(event string) ([]map[string]any, bool) {
	names, _ := filepath.Glob(filepath.Join(e.hookDir, "*-"+event+".json"))
	sort.Strings(names)
	var out []map[string]any
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return out, false
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return out, false
		}
		out = append(out, m)
	}
	return out, true
}

// waitHooks waits until at least n payloads of event are complete.
func (e *simEnv) waitHooks(event string, n int) []map[string]any {
	e.t.Helper()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		if h, ok := e.hooks(event); ok && len(h) >= n {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
	h, _ := e.hooks(event)
	e.t.Fatalf("timed out waiting for %d %s hooks, have %d", n, event, len(h))
	return nil
}

// noHook asserts that event did not fire more than n times within d.
func (e *simEnv) noHook(event string, n int, d time.Duration) {
	e.t.Helper()
	time.Sleep(d)
	if h, _ := e.hooks(event); len(h) > n {
		e.t.Fatalf("%s fired %d times, want %d: %v", event, len(h), n, h)
	}
}

func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: bad line %q: %v", path, sc.Text(), err)
		}
		rows = append(rows, m)
	}
	return rows
}

func (e *simEnv) requests() []map[string]any {
	return readJSONL(e.t, filepath.Join(e.state, "requests.jsonl"))
}

func (e *simEnv) transcript(id string) []map[string]any {
	return readJSONL(e.t, filepath.Join(e.state, "sessions", id+".jsonl"))
}

// field digs a nested value out of decoded JSON: field(m, "a", "b").
func field(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func str(m map[string]any, path ...string) string {
	s, _ := field(m, path...).(string)
	return s
}

func num(m map[string]any, path ...string) int {
	f, _ := field(m, path...).(float64)
	return int(f)
}

// runChild runs the simulator directly (no tmux) in the env's work dir.
func (e *simEnv) runChild(stdin string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"--settings", e.writeSettings("")}, args...)...)
	cmd.Dir = e.work
	cmd.Env = append(os.Environ(), e.childEnv()...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
