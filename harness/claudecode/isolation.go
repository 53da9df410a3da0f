package claudecode

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// probeTimeout bounds the sandbox probe run at each launch (it takes a few ms).
const probeTimeout = 10 * time.Second

// ProbeIsolation checks that Claude Code's Bash sandbox can run for the seat:
// on Linux it needs bubblewrap and socat on the harness's PATH (Debian
// packages bubblewrap, socat), and bubblewrap must be able to make its
// namespaces here. The probe runs bubblewrap the way the sandbox needs it (a
// new pid and network namespace, fresh /proc), so a container without user
// namespaces is reported as such instead of a seat that believes it is
// isolated. The settings pantty writes also set failIfUnavailable, so claude
// itself refuses to start unsandboxed if this ever passes wrongly.
func (Adapter) ProbeIsolation(_ state.Seat, _ config.Config, env map[string]string) (string, error) {
	bwrap, err := launch.LookPathIn(env["PATH"], "bwrap")
	if err != nil {
		return "", fmt.Errorf("the Claude Code sandbox needs bubblewrap: %v (install the bubblewrap package)", err)
	}
	if _, err := launch.LookPathIn(env["PATH"], "socat"); err != nil {
		return "", fmt.Errorf("the Claude Code sandbox needs socat: %v (install the socat package)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-net", "--die-with-parent", "true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("bubblewrap cannot make a sandbox here (%s --unshare-pid --unshare-net: %v: %s)",
			bwrap, err, strings.TrimSpace(stderr.String()))
	}
	return "Claude Code Bash sandbox (bubblewrap)", nil
}

// Secrets is Claude Code's own credential file for the seat: the OAuth tokens of
// a `claude login` in its config directory. An API key comes by environment.
func (Adapter) Secrets(_ state.Seat, c config.Config) []string {
	dir, err := ConfigDir(c)
	if err != nil || !filepath.IsAbs(dir) {
		return nil
	}
	return []string{filepath.Join(dir, ".credentials.json")}
}
