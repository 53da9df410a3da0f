package jail

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/state"
)

// Mechanism names pantty's jail in authority.toml, status and `pantty gates`.
const Mechanism = "pantty's bubblewrap jail"

// probeTimeout bounds the probe run at each launch (a few ms here).
const probeTimeout = 10 * time.Second

// base are the options every jail starts from: the host read-only, a fresh
// /dev and /proc (with /proc/sys read-only: with uid 0 and no capabilities a
// fresh /proc/sys/kernel/core_pattern was still writable, measured
// 2026-12-05, bubblewrap 0.8.0, kernel 6.18), a private /tmp, its own pid and
// IPC namespaces, no capabilities (bubblewrap run by root keeps them all
// otherwise: CapEff 000001fffeffffff inside, measured), and the jail dies
// with the pane process.
func base() []string {
	return []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys",
		"--tmpfs", "/tmp", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL", "--die-with-parent"}
}

// Probe checks that bubblewrap runs the jail here, with the harness's PATH:
// bwrap on it and able to make the namespaces (a container without them is
// reported as such, not as an isolated seat).
func Probe(env map[string]string) (string, error) {
	bwrap, err := launch.LookPathIn(env["PATH"], "bwrap")
	if err != nil {
		return "", fmt.Errorf("%s needs bubblewrap: %v (install the bubblewrap package)", Mechanism, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bwrap, append(base(), "true")...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("bubblewrap cannot make %s here (%s: %v: %s)", Mechanism, bwrap, err, strings.TrimSpace(out.String()))
	}
	return Mechanism, nil
}

// Spec is what one jailed launch needs beside the harness's argv.
type Spec struct {
	Seat    state.Seat
	Workdir string
	// Writable are the harness's own directories besides the workdir (its
	// home): bound read-write.
	Writable []string
	// Readable are files the jail must still show when a hidden directory
	// holds them (the pantty binary the hooks run, the harness binary).
	Readable []string
	// Sockets are the tmux sockets whose directories are hidden (the seat's
	// own server: `tmux run-shell` on it would run outside the jail).
	Sockets []string
	// Drop is the seat's drop directory (bound read-write).
	Drop string
}

// CheckWritable refuses a writable directory that would show pantty's state:
// one that holds the state root or the drop root, or lies in the state root
// outside the seat's own directory (another seat's files).
func CheckWritable(s state.Seat, dirs []string) error {
	home := filepath.Clean(s.Home)
	drops := filepath.Dir(state.DropDir(s))
	for _, d := range dirs {
		d = filepath.Clean(d)
		switch {
		case !filepath.IsAbs(d):
			return fmt.Errorf("%s: the harness's home %q is not absolute", Mechanism, d)
		case state.Within(home, d), state.Within(drops, d):
			return fmt.Errorf("%s: the harness's home %s holds pantty's state", Mechanism, d)
		case state.Within(d, home) && !state.Within(d, s.Dir):
			return fmt.Errorf("%s: the harness's home %s is another seat's", Mechanism, d)
		}
	}
	return nil
}

// Wrap returns the launch record that runs lf's harness in the jail: argv
// becomes bwrap's, the environment names the hook door (DoorEnv), and the
// record asks the pane process to serve the door (state.LaunchFile.Door) for
// the hook flags given.
func Wrap(lf state.LaunchFile, sp Spec, doorFlags []string) (state.LaunchFile, error) {
	if err := CheckWritable(sp.Seat, sp.Writable); err != nil {
		return lf, err
	}
	bwrap, err := launch.LookPathIn(lf.Env["PATH"], "bwrap")
	if err != nil {
		return lf, fmt.Errorf("%s: %v", Mechanism, err)
	}
	door := DoorPath(sp.Seat)
	if len(door) > maxSocketPath {
		return lf, fmt.Errorf("%s: the hook door's path %s is longer than a Unix socket allows (%d bytes)", Mechanism, door, maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(door), 0o700); err != nil {
		return lf, err
	}
	home := filepath.Clean(sp.Seat.Home)
	hidden := []string{"/tmp", home, filepath.Dir(state.DropDir(sp.Seat))}
	for _, sock := range sp.Sockets {
		if sock != "" {
			hidden = append(hidden, filepath.Dir(sock))
		}
	}
	args := append([]string{bwrap}, base()...)
	// What must stay visible goes back read-only before the state is hidden
	// again over it: the top directory below a hidden root that holds it (a
	// node script needs its package, not only its file).
	for _, p := range sp.Readable {
		if p == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		for _, h := range hidden {
			if top := topBelow(h, p); top != "" {
				args = append(args, "--ro-bind", top, top)
				break
			}
		}
	}
	for _, h := range hidden[1:] { // /tmp is base's; under it, each is hidden again over a bind above
		args = append(args, "--tmpfs", h)
	}
	// A readable file the hiding covered again (a binary beside the tmux
	// socket, say) comes back alone, read-only.
	for _, p := range sp.Readable {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		for _, h := range hidden[1:] {
			if p != "" && state.Within(p, h) {
				args = append(args, "--ro-bind", p, p)
				break
			}
		}
	}
	for _, w := range append([]string{sp.Workdir}, sp.Writable...) {
		if err := os.MkdirAll(w, 0o700); err != nil {
			return lf, err
		}
		args = append(args, "--bind", w, w)
	}
	if sp.Drop != "" {
		args = append(args, "--bind", sp.Drop, sp.Drop)
	}
	args = append(args, "--ro-bind", filepath.Dir(door), filepath.Dir(door))
	if lf.Dir != "" {
		args = append(args, "--chdir", lf.Dir)
	}
	out := lf
	out.Argv = append(append(args, "--"), lf.Argv...)
	out.Env = map[string]string{}
	for k, v := range lf.Env {
		out.Env[k] = v
	}
	out.Env[DoorEnv] = door
	out.Door, out.DoorFlags = door, doorFlags
	return out, nil
}

// topBelow is the first path component below root that holds p ("" when p
// is not below root).
func topBelow(root, p string) string {
	if !state.Within(p, root) || filepath.Clean(p) == filepath.Clean(root) {
		return ""
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return filepath.Join(root, first)
}
