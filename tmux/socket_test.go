package tmux_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/tmux"
	"github.com/pantty/pantty/tmux/tmuxtest"
)

func TestSocketPath(t *testing.T) {
	base := tmuxtest.Dir(t)
	t.Setenv("TMUX_TMPDIR", base)
	uidDir := filepath.Join(base, fmt.Sprintf("tmux-%d", os.Getuid()))
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", tmux.MaxSocketPath)
	tests := []struct {
		spec    string
		want    string
		wantErr bool
	}{
		{spec: "", want: filepath.Join(uidDir, "pantty")},
		{spec: "work", want: filepath.Join(uidDir, "work")},
		{spec: "/abs/dir/sock", want: "/abs/dir/sock"},
		{spec: "/abs/dir/../sock", want: "/abs/sock"},
		{spec: "rel/sock", want: filepath.Join(cwd, "rel/sock")},
		{spec: "./sock", want: filepath.Join(cwd, "sock")},
		{spec: long, wantErr: true},                      // name: too long once resolved
		{spec: "/" + long, wantErr: true},                // path: too long
		{spec: "/" + long[:106], want: "/" + long[:106]}, // exactly 107 bytes is fine
		{spec: "..", wantErr: true},
	}
	for _, tc := range tests {
		got, err := tmux.SocketPath(tc.spec)
		if tc.wantErr {
			if err == nil {
				t.Errorf("SocketPath(%.20q) = %q, want error", tc.spec, got)
			} else if !errors.Is(err, tmux.ErrInvalid) {
				t.Errorf("SocketPath(%.20q) error %v does not match ErrInvalid", tc.spec, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("SocketPath(%.20q) = %q, %v; want %q", tc.spec, got, err, tc.want)
		}
	}
	fi, err := os.Stat(uidDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir %s: %v, mode %v; want 0700", uidDir, err, fi.Mode().Perm())
	}

	// tmux -L reaches the same socket: a server started by hand with
	// -L work is the one a Client on SocketPath("work") talks to.
	sock, err := tmux.SocketPath("work")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tmux", "-L", "work", "-f", "/dev/null", "new-session", "-d", "-s", "byhand", "sleep", "30").CombinedOutput(); err != nil {
		t.Fatalf("tmux -L work new-session: %v: %s", err, out)
	}
	c := tmux.New(sock)
	ok, err := c.HasSession(ctxFor(t), "byhand")
	if kerr := c.KillServer(ctxFor(t)); kerr != nil {
		t.Errorf("KillServer on %s: %v", sock, kerr)
	}
	if !ok || err != nil {
		t.Fatalf("HasSession(byhand) on %s = %v, %v; want true", sock, ok, err)
	}

	// A world-accessible tmux-<uid> directory is refused, as tmux does.
	if err := os.Chmod(uidDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := tmux.SocketPath("work"); err == nil {
		t.Errorf("SocketPath accepted a socket dir with mode 0777")
	}
}

func TestShellQuote(t *testing.T) {
	words := []string{"", "plain", "it's", "a b", `$HOME`, "`id`", `back\slash`, "new\nline", "*", "--x", "~", "#{pane_id}"}
	for _, w := range words {
		q := tmux.ShellQuote(w)
		out, err := exec.Command("/bin/sh", "-c", "printf '%s' "+q).Output()
		if err != nil {
			t.Fatalf("sh with %s: %v", q, err)
		}
		if string(out) != w {
			t.Errorf("ShellQuote(%q) = %s, shell saw %q", w, q, out)
		}
	}
}
