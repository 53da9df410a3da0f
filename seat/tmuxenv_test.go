package seat_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/seattest"
)

// A pass_env secret reaches the harness (through the launch record and
// `pantty __exec`) and nothing of tmux: not the private server's global or
// session environment (`tmux show-environment`, which any process of the user
// with the socket can run), nor the server process's own environment
// (/proc/PID/environ). tmux copies the environment of the client that starts
// its server, so the driver starts it with a minimal one.
func TestPassEnvStaysOutOfTheTmuxServer(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-7d1e"
	h := seattest.New(t, "penv", seattest.TOML(`pass_env = ["AUTHFIX_SECRET"]`))
	if r := h.RunEnv(map[string]string{"AUTHFIX_SECRET": secret}, "", "seat", "start", h.Name); r.Code != 0 {
		t.Fatalf("seat start: %s", r)
	}
	sess := h.Session()
	tmuxOut := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", h.Socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	server := strings.TrimSpace(tmuxOut("display-message", "-p", "#{pid}"))
	environ, err := os.ReadFile("/proc/" + server + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{
		"show-environment -g":                       tmuxOut("show-environment", "-g"),
		"show-environment -t " + sess.TmuxName:      tmuxOut("show-environment", "-t", "="+sess.TmuxName),
		"the server's /proc/" + server + "/environ": string(environ),
	} {
		if strings.Contains(text, secret) || strings.Contains(text, "AUTHFIX_SECRET") {
			t.Errorf("%s holds the pass_env secret:\n%s", what, strings.ReplaceAll(text, "\x00", "\n"))
		}
	}
	harness, err := proc.HarnessPID(sess.PanePID)
	if err != nil {
		t.Fatal(err)
	}
	henv, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", harness))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(henv, []byte("\x00AUTHFIX_SECRET="+secret+"\x00")) && !bytes.HasPrefix(henv, []byte("AUTHFIX_SECRET="+secret+"\x00")) {
		t.Errorf("the harness (pid %d) does not see AUTHFIX_SECRET: the control fails", harness)
	}
}
