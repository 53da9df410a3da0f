package codex_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

// attackScript is what a model with a shell can run against a Codex app
// server (stdlib Python): connect to the Unix socket given, upgrade to a
// WebSocket by hand, initialize, list the server's threads (thread/list),
// start a thread of its own and a turn on it whose sandbox and approval
// policy it overrides (turn/start's sandboxPolicy dangerFullAccess,
// approvalPolicy never). Each step prints one "ATTACK <step>" line. The
// turn's text is built here from argv[2], so the command that carries the
// script never holds it whole.
const attackScript = `import base64, json, os, socket, struct, sys
path, nonce = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.settimeout(8)
try:
    s.connect(path)
except Exception as e:
    print("ATTACK connect failed:", path, repr(e)); sys.exit(3)
print("ATTACK connected:", path)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
head, buf = buf.split(b"\r\n\r\n", 1)
print("ATTACK handshake:", head.split(b"\r\n")[0].decode())
def send(obj):
    p = json.dumps(obj).encode(); m = os.urandom(4)
    h = bytes([0x81]) + (bytes([0x80 | len(p)]) if len(p) < 126 else bytes([0x80 | 126]) + struct.pack(">H", len(p)))
    s.sendall(h + m + bytes(b ^ m[i % 4] for i, b in enumerate(p)))
def need(n):
    global buf
    while len(buf) < n:
        c = s.recv(65536)
        if not c: raise EOFError("closed")
        buf += c
def recv():
    global buf
    need(2); n = buf[1] & 0x7f; off = 2
    if n == 126: need(4); n = struct.unpack(">H", buf[2:4])[0]; off = 4
    elif n == 127: need(10); n = struct.unpack(">Q", buf[2:10])[0]; off = 10
    need(off + n); p = buf[off:off + n]; buf = buf[off + n:]
    return json.loads(p)
def call(i, method, params):
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    while True:
        m = recv()
        if m.get("id") == i and "method" not in m: return m
call(1, "initialize", {"clientInfo": {"name": "attacker", "version": "0"}})
send({"jsonrpc": "2.0", "method": "initialized"})
r = call(2, "thread/list", {})
print("ATTACK threads:", " ".join(t.get("id", "") for t in r.get("result", {}).get("data", [])), r.get("error", ""))
r = call(3, "thread/start", {"cwd": os.getcwd()})
tid = r.get("result", {}).get("thread", {}).get("id", "")
print("ATTACK thread/start:", tid, r.get("error", ""))
r = call(4, "turn/start", {"threadId": tid, "input": [{"type": "text", "text": "ATTACKER" + "-TURN-" + nonce}],
                            "sandboxPolicy": {"type": "dangerFullAccess"}, "approvalPolicy": "never"})
print("ATTACK turn/start:", json.dumps(r)[:300])
`

// appServerAttack runs one attack through the model's own shell tool
// (exec_command, the stand-in's [standin:bash=…]) on a seat with transport
// = "app-server" run by pantty's driver, after a first turn opened the
// viewer pane: list /tmp/codex-daemon-<uid>/, list the seat's tmux panes
// (the viewer TUI, which takes keys as a person's), then attackScript against the seat's socket path (its symlink in
// <seat>/harness/), against the socket it points to, whose name the
// model can compute without listing anything (sha256 of the symlink's
// path, measured on 0.171.0), and against another server's socket
// (otherServer). isolated: pantty's permission profile on
// (a CODEX_HOME outside /tmp, no permission_mode), else the rig's
// permission_mode = "danger-full-access". It returns the tool's output and
// how many of the stand-in's requests carried the attacker's turn.
func appServerAttack(t *testing.T, name string, isolated bool) (out string, attackerTurns int, r *rig) {
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Skipf("no python3 for the model's shell: %v", err)
	}
	r = newRig(t, name, appServerTOML)
	s := r.Seat()
	if isolated {
		isolate(t, r)
	}
	if err := os.WriteFile(filepath.Join(r.Work, "attack.py"), []byte(attackScript), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Start()
	if a, err := s.AuthorityFile().Read(); err != nil || a.On() != isolated {
		t.Fatalf("authority.toml %+v (%v): want isolation on = %v", a, err, isolated)
	}
	// A first turn opens the viewer pane (after the thread's first turn), so
	// the seat's tmux server is there to attack too.
	r.Send("warm", "hello")
	r.Processed("warm")
	r.WaitPane()
	link := codex.AppServerSocket(s)
	sum := sha256.Sum256([]byte(link))
	other := sha256.Sum256([]byte(otherServer(t, r)))
	nonce := fmt.Sprintf("%x", sha256.Sum256([]byte(t.Name())))[:12]
	pyBin := strings.TrimSpace(string(py))
	// The output goes to a file in the workdir as well: exec_command hands
	// back what a command printed within its yield time only.
	cmd := fmt.Sprintf("(ls -la /tmp/codex-daemon-$(id -u)/; echo ls=$?; tmux -S %[5]s list-panes -a; echo tmux=$?; "+
		"%[1]s -u attack.py %[2]s %[4]s; echo linkattack=$?; "+
		"%[1]s -u attack.py /tmp/codex-daemon-$(id -u)/%[3]s %[4]s; echo sockattack=$?; "+
		"%[1]s -u attack.py /tmp/codex-daemon-$(id -u)/%[6]s %[4]s; echo otherattack=$?) >attack.out 2>&1; cat attack.out",
		pyBin, link, hex.EncodeToString(sum[:]), nonce, r.Socket, hex.EncodeToString(other[:]))
	r.Send("atk", "run it\n[standin:bash="+cmd)
	r.Processed("atk")
	outPath := filepath.Join(r.Work, "attack.out")
	r.WaitFor("the attack's end", 60*time.Second, func() bool {
		b, _ := os.ReadFile(outPath)
		return strings.Contains(string(b), "otherattack=")
	})
	b, _ := os.ReadFile(outPath)
	out = string(b)
	for _, q := range r.api.Requests() {
		if q.Kind == "tool_result" {
			t.Logf("exec_command's output at the model: %q", q.ToolOutput)
		}
		if q.Kind == "turn" && strings.Contains(q.NewInput, "ATTACKER-TURN-"+nonce) {
			attackerTurns++
		}
	}
	t.Logf("the model's shell (exec_command), isolated=%v:\n%s", isolated, out)
	return out, attackerTurns, r
}

// otherServer starts another app server of this user beside r's seat, as
// another seat's would be (its own CODEX_HOME naming r's stand-in), and
// returns its socket path: its socket sits in the same
// /tmp/codex-daemon-<uid>/.
func otherServer(t *testing.T, r *rig) string {
	t.Helper()
	root := t.TempDir()
	home, sock := filepath.Join(root, "home"), filepath.Join(root, "other.sock")
	if err := codex.WriteProvider(home, "standin", r.api.URL()+"/v1", "STANDIN_API_KEY", model); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Under pantty's pane process, as a seat's server runs, so its sandbox
	// helpers end with it (codex.UnderPaneProcess).
	spec, err := codex.UnderPaneProcess(appserver.Spec{Bin: codexBinary(t), Home: home, Socket: sock, Dir: r.Work,
		Env: append(os.Environ(), "STANDIN_API_KEY=standin-key"), Args: []string{"-c", `approval_policy="never"`}},
		r.Bin, state.LaunchFileAt(filepath.Join(root, "launch.toml")))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := appserver.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	return sock
}

// TestAppServerModelShellCannotReachItsServer: with pantty's permission
// profile on (isolation auto, Codex's sandbox running the model's
// commands), the model's shell cannot reach its own seat's app server, so
// it cannot start turns, override the sandbox or approval policy
// (turn/start's sandboxPolicy/approvalPolicy), start or resume threads,
// interrupt or compact pantty's turns, answer approvals or read threads
// through it (every one of those needs a connection). Measured on Codex
// 0.171.0, 2026-12-06: Codex's sandbox mounts an empty, mode-000 directory
// over /tmp/codex-daemon-<uid> (`ls` "Permission denied"), its seccomp
// filter refuses connect() on every socket with the network restricted
// (EPERM, "Operation not permitted"), and the seat's symlink lies under
// $PANTTY_HOME, which the profile denies. Another server of this user (as
// another seat's, otherServer), whose socket sits in the same masked
// directory, was refused the same way. pantty's profile denies that directory as well
// (codex.DaemonDir = "none"), which this test checks is written. The
// seat's tmux server (the viewer pane, whose TUI takes keys as a person's)
// is out of reach the same way: connect() refused.
//
// What stays open, and is not pantty's to close: a seat without Codex's
// sandbox (permission_mode = "danger-full-access", isolation off or
// unavailable) runs the model's commands as the user who runs pantty, and
// that shell reaches every app server of that user — list its threads,
// start threads and turns with any sandbox policy (the control below) —
// as it can read $PANTTY_HOME, signal the driver or ptrace the server:
// such a model owns the machine anyway (docs/codex.md, "What the model's
// shell can reach on this path").
func TestAppServerModelShellCannotReachItsServer(t *testing.T) {
	out, turns, r := appServerAttack(t, "cxatk-iso", true)
	cfg, err := r.Seat().LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(codex.Home(r.Seat(), cfg), "config.toml"))
	if want := fmt.Sprintf("%q = \"none\"", codex.DaemonDir()); !strings.Contains(string(b), want) {
		t.Errorf("pantty's profile lacks %s:\n%s", want, b)
	}
	if strings.Contains(out, "ls=0") || !strings.Contains(out, "ls=") {
		t.Errorf("the sandboxed shell listed /tmp/codex-daemon-<uid>/")
	}
	if strings.Contains(out, "tmux=0") || !strings.Contains(out, "tmux=") {
		t.Errorf("the sandboxed shell reached the seat's tmux server (the viewer pane)")
	}
	for _, k := range []string{"linkattack", "sockattack", "otherattack"} {
		if !strings.Contains(out, k+"=3") {
			t.Errorf("%s: the sandboxed shell's connect() was not refused (want exit 3)", k)
		}
	}
	if strings.Contains(out, "ATTACK connected") || strings.Contains(out, "ATTACK handshake") {
		t.Errorf("the sandboxed shell connected to an app server")
	}
	if !strings.Contains(out, "Operation not permitted") && !strings.Contains(out, "Permission denied") {
		t.Errorf("no refusal in the output: the attack did not run as measured")
	}
	if turns != 0 {
		t.Errorf("the attacker's turn reached the model %d time(s)", turns)
	}
}

// TestAppServerUnsandboxedShellOwnsItsServer is the control of
// TestAppServerModelShellCannotReachItsServer and the measure of what stays
// open: the same attack from a seat with permission_mode =
// "danger-full-access" (no sandbox) lists /tmp/codex-daemon-<uid>/ and
// the seat's tmux panes (the viewer, to type into),
// connects through the seat's own symlink, the socket behind it and
// another server's socket (otherServer), reads
// the seat's thread (thread/list) and starts a thread and a turn with the
// sandbox overridden to dangerFullAccess, which reaches the model. Were
// this to fail, the isolated test's refusals would prove nothing.
func TestAppServerUnsandboxedShellOwnsItsServer(t *testing.T) {
	out, turns, r := appServerAttack(t, "cxatk-open", false)
	if !strings.Contains(out, "ls=0") {
		t.Errorf("control: the unsandboxed shell could not list /tmp/codex-daemon-<uid>/")
	}
	if !strings.Contains(out, "tmux=0") {
		t.Errorf("control: the unsandboxed shell could not list the seat's tmux panes")
	}
	for _, k := range []string{"linkattack", "sockattack", "otherattack"} {
		if !strings.Contains(out, k+"=0") {
			t.Errorf("control: %s did not complete", k)
		}
	}
	if id := r.Session().ID; id == "" || !strings.Contains(out, id) {
		t.Errorf("control: thread/list did not show the seat's thread %q", id)
	}
	if !strings.Contains(out, `"status": "inProgress"`) {
		t.Errorf("control: turn/start with sandboxPolicy dangerFullAccess was not answered with a turn")
	}
	// Three attacks (through the symlink, through the socket, on the other
	// server), one turn each.
	r.WaitFor("the attacker's turns at the model", 30*time.Second, func() bool {
		n := 0
		for _, q := range r.api.Requests() {
			if q.Kind == "turn" && strings.Contains(q.NewInput, "ATTACKER-TURN-") {
				n++
			}
		}
		return n >= 3
	})
	t.Logf("attacker turns at the model when the seat's turn ended: %d", turns)
}

// TestAppServerModelsDetachedProcessesStayInsideTheSeat: on the app-server
// path the model's shell runs below the seat's server, which pantty starts
// under its pane process (`pantty __exec <seat>/server-launch.toml`, a
// child subreaper whose pid session.toml records). So, with Codex's sandbox
// off (the control's permission_mode = "danger-full-access"), what the
// model detaches is still the seat's: a `pantty seat stop` run through
// setsid with the seat's markers dropped is refused as from inside the
// seat (by ancestry), and a process started with `env -i setsid -f` (no
// marker, its own session) is ended by `seat stop`. Before the server ran
// under the pane process both held the other way: the refusal had only the
// markers to go by, and the detached process was reparented to pid 1.
func TestAppServerModelsDetachedProcessesStayInsideTheSeat(t *testing.T) {
	r := newRig(t, "cxdetach", appServerTOML)
	t0 := time.Now()
	r.Start()
	mark := fmt.Sprint(900000 + os.Getpid()%99999) // sleep's argument names it
	argv := []string{r.Bin, "--home", r.Home, "seat", "stop", "cxdetach"}
	for i := range argv {
		argv[i] = tmux.ShellQuote(argv[i])
	}
	stop := "env -u " + launch.SeatEnv + " -u " + launch.SeatHomeEnv + " " + strings.Join(argv, " ") +
		" </dev/null >stop.out 2>&1; echo $? >stop.code.tmp; mv stop.code.tmp stop.code"
	cmd := "env -i setsid -f sleep " + mark + " </dev/null >/dev/null 2>&1; setsid -f sh -c " + tmux.ShellQuote(stop)
	r.Send("d1", "run it\n[standin:bash="+cmd)
	r.Processed("d1")
	t.Logf("d1 processed at %s", time.Since(t0).Round(time.Millisecond))
	code := filepath.Join(r.Work, "stop.code")
	r.WaitFor("the detached seat stop's exit code", 60*time.Second, func() bool {
		_, err := os.Stat(code)
		return err == nil
	})
	b, _ := os.ReadFile(code)
	out, _ := os.ReadFile(filepath.Join(r.Work, "stop.out"))
	if got := strings.TrimSpace(string(b)); got != "2" || !strings.Contains(string(out), `inside seat "cxdetach"`) {
		t.Errorf("seat stop from the model's detached shell: exit %s (%q), want 2 and the in-seat refusal", got, out)
	}
	var sleeper []string
	r.WaitFor("the model's detached process", 30*time.Second, func() bool {
		sleeper = tmuxtest.Running("sleep\x00" + mark)
		return len(sleeper) > 0
	})
	t.Logf("the detached process seen at %s", time.Since(t0).Round(time.Millisecond))
	if res := r.Run("seat", "stop", "cxdetach"); res.Code != 0 {
		t.Fatalf("seat stop: %s", res)
	}
	if left := tmuxtest.Running("sleep\x00" + mark); len(left) > 0 {
		t.Errorf("the model's detached process outlived seat stop: %v", left)
		for _, p := range left {
			var pid int
			fmt.Sscanf(p, "pid %d:", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Logf("detached before the stop: %v; stopped at %s", sleeper, time.Since(t0).Round(time.Millisecond))
}
