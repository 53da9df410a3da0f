package codex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// ProfileName is the permission profile pantty writes into the seat's
// config.toml when isolation is on (setIsolation).
const ProfileName = "pantty"

// probeTimeout bounds the sandbox probe run at each launch.
const probeTimeout = 20 * time.Second

// ProbeIsolation runs `codex sandbox -- true` with the seat's CODEX_HOME and
// environment: Codex's own Linux sandbox (bubblewrap and seccomp, through its
// codex-linux-sandbox helper) either runs a command here or says why not.
// Measured on 0.171.0: it works as root in this container, except with a
// CODEX_HOME under /tmp, where Codex refuses to create its helper links
// ("Refusing to create helper binaries under temporary dir") and every
// sandboxed command then fails ("execvp codex-linux-sandbox").
// seat.toml's permission_mode becomes Codex's --sandbox flag, which replaces a
// permission profile, so a seat that sets it cannot be isolated by pantty.
func (Adapter) ProbeIsolation(s state.Seat, c config.Config, env map[string]string) (string, error) {
	if s.Home == "" {
		return "", launch.ErrPerSeat
	}
	if c.PermissionMode != "" {
		return "", fmt.Errorf("seat.toml permission_mode = %q passes --sandbox, which replaces pantty's permission profile", c.PermissionMode)
	}
	home := Home(s, c)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binaryPath(c, env), "sandbox", "-c", `default_permissions=":workspace"`, "--", "true")
	cmd.Dir = c.Workdir
	cmd.Env = append(envPairs(env), "CODEX_HOME="+home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the Codex sandbox cannot run a command here (codex sandbox -- true: %v: %s)", err, lastLine(out.String()))
	}
	return "Codex sandbox (permission profile " + ProfileName + ")", nil
}

// Secrets is Codex's credential file for the seat (auth.json in its
// CODEX_HOME); with the default CODEX_HOME it is inside $PANTTY_HOME already.
func (Adapter) Secrets(s state.Seat, c config.Config) []string {
	return []string{filepath.Join(Home(s, c), "auth.json")}
}

// setIsolation writes (or, with isolation off, removes) pantty's permission
// profile: Codex's :workspace (writes in the workdir and the temp
// directories) with $PANTTY_HOME and the seat's credentials denied for reading
// and writing ("none"), every seat's drop directory denied and this seat's own
// granted, and Codex's app-server socket directory (DaemonDir) denied too. A
// sandbox_mode key is removed while the profile is on: Codex uses
// sandbox_mode instead of any profile when both are set.
func setIsolation(cfg map[string]any, a state.Authority) {
	perms := table(cfg, "permissions")
	if !a.On() {
		if cfg["default_permissions"] == ProfileName {
			delete(cfg, "default_permissions")
		}
		delete(perms, ProfileName)
		if len(perms) == 0 {
			delete(cfg, "permissions")
		}
		return
	}
	delete(cfg, "sandbox_mode")
	cfg["default_permissions"] = ProfileName
	fs := map[string]any{}
	for _, p := range a.Protected {
		fs[p] = "none"
	}
	if a.Drop != "" {
		fs[filepath.Dir(a.Drop)] = "none"
		fs[a.Drop] = "write"
	}
	fs[DaemonDir()] = "none"
	perms[ProfileName] = map[string]any{"extends": ":workspace", "filesystem": fs}
}

// DaemonDir is where Codex puts the socket of every app server this user
// runs (each seat's AppServerSocket is a symlink into it): a socket there
// takes turn/start with any sandbox and approval policy, so the model's
// shell must not reach it. Codex 0.171.0 fixes the directory at
// /tmp/codex-daemon-<uid> (TMPDIR did not move it, measured) and its own
// sandbox already mounts an empty mode-000 directory over it; pantty's
// profile denies it as well ("none"), so the hiding does not rest on
// Codex's mask alone: with network access enabled a sandboxed connect()
// to a Unix socket outside a denied directory succeeded, inside one it
// was refused (docs/codex.md, "What the model's shell can reach on this
// path").
func DaemonDir() string {
	return fmt.Sprintf("/tmp/codex-daemon-%d", os.Getuid())
}

func binaryPath(c config.Config, env map[string]string) string {
	bin := binary(c)
	if p, err := launch.LookPathIn(env["PATH"], bin); err == nil && !strings.Contains(bin, "/") {
		return p
	}
	return bin
}

func envPairs(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return truncate(lines[len(lines)-1], 300)
}
