package tmux

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultSocketName is the socket name used when the spec is empty: pantty
// runs its own tmux server, never the user's "default" one, so that killing
// or reconfiguring it cannot touch the user's own sessions.
const DefaultSocketName = "pantty"

// MaxSocketPath is the longest socket path a Unix-domain socket can bind on
// Linux (sun_path is 108 bytes including the terminating NUL). tmux fails
// late and obscurely on longer paths, so SocketPath refuses them up front.
const MaxSocketPath = 107

// SocketPath resolves a PANTTY-style socket spec to an absolute path, so
// every later call can use tmux -S with no ambiguity about which server it
// talks to.
//
// A spec containing '/' is a filesystem path and is made absolute (relative
// to the working directory). Anything else is a socket name resolved the way
// tmux -L resolves it, ${TMUX_TMPDIR:-/tmp}/tmux-<uid>/<name>, so that
// "tmux -L <name>" reaches the same server by hand; the tmux-<uid> directory
// is created with mode 0700 when missing and, like tmux, refused when it is
// not owned by us or is accessible to others. An empty spec means
// DefaultSocketName. Paths longer than MaxSocketPath bytes are an error.
func SocketPath(spec string) (string, error) {
	var path string
	if strings.ContainsRune(spec, '/') {
		abs, err := filepath.Abs(spec)
		if err != nil {
			return "", fmt.Errorf("tmux: socket path %q: %w", spec, err)
		}
		path = abs
	} else {
		name := spec
		if name == "" {
			name = DefaultSocketName
		}
		if name == "." || name == ".." || strings.ContainsRune(name, 0) {
			return "", fmt.Errorf("tmux: invalid socket name %q: %w", name, ErrInvalid)
		}
		base := os.Getenv("TMUX_TMPDIR")
		if base == "" {
			base = "/tmp"
		}
		// tmux resolves the base with realpath(3); follow it so both name
		// the same file even when TMUX_TMPDIR is a symlink.
		if real, err := filepath.EvalSymlinks(base); err == nil {
			base = real
		}
		dir := filepath.Join(base, fmt.Sprintf("tmux-%d", os.Getuid()))
		path = filepath.Join(dir, name)
		if len(path) > MaxSocketPath {
			return "", socketTooLong(path)
		}
		if err := ensureSocketDir(dir); err != nil {
			return "", err
		}
	}
	if len(path) > MaxSocketPath {
		return "", socketTooLong(path)
	}
	return path, nil
}

// socketTooLong reports a socket path the kernel could not bind.
func socketTooLong(path string) error {
	return fmt.Errorf("tmux: socket path is %d bytes, longer than the %d-byte Unix socket limit: %s: %w",
		len(path), MaxSocketPath, path, ErrInvalid)
}

// ensureSocketDir creates the per-uid socket directory like tmux does and
// applies tmux's own safety check, so we never place our socket in a
// directory another user controls.
func ensureSocketDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("tmux: creating socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("tmux: socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("tmux: socket directory %s is not a directory", dir)
	}
	if uid, ok := fileOwner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("tmux: socket directory %s is owned by uid %d, not %d", dir, uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o007 != 0 {
		return fmt.Errorf("tmux: socket directory %s has unsafe permissions %v", dir, fi.Mode().Perm())
	}
	return nil
}

// ShellQuote quotes s for a POSIX shell as a single word. Hook commands and
// run-shell arguments are shell strings, so any path or value spliced into
// them must go through this. The result is also a single literal word for
// tmux's own command parser (single quotes suppress its expansions), but
// note that run-shell additionally expands #{formats}: a '#' in s is still
// seen by tmux there.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("@%_+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fileOwner returns the owning uid of a file when the platform exposes it.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
