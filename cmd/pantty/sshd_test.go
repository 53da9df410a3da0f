package main

import (
	"errors"
	"os"
	"testing"

	"github.com/pantty/pantty/internal/loopsshd"
)

// sshServer is a private OpenSSH server on 127.0.0.1 for one test: its own
// host key, config and authorized key, run as the current user
// (internal/loopsshd, which the fleet bench shares).
type sshServer struct {
	Dir    string // keys, configs, the client config, the ssh wrapper
	Port   int
	BinDir string // put first on PATH: its ssh is the real ssh with this test's client config
}

// requireSSHD returns the sshd binary. Without it the test skips, except
// under CI, where it fails: scripts/test.sh installs openssh-server (the
// convention of the tests that need a real harness binary).
func requireSSHD(t *testing.T) string {
	t.Helper()
	sshd, err := loopsshd.SSHD()
	if errors.Is(err, loopsshd.ErrNotInstalled) && os.Getenv("CI") != "" {
		t.Fatal("sshd or ssh is not installed (scripts/test.sh installs openssh-server)")
	}
	if err != nil {
		t.Skip("sshd or ssh is not installed (apt-get install openssh-server; scripts/test.sh does)")
	}
	return sshd
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := loopsshd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startSSHD starts sshd on a free loopback port (loopsshd.Start: its
// sessions get SHLVL=1, so a slow ~/.bashrc does not count against the
// bound) and writes the client config: aliases maps a host alias to extra
// ssh_config lines (none: this server). The ssh on BinDir is /usr/bin/ssh -F
// that config; pantty runs plain `ssh DEST` all the same.
func startSSHD(t *testing.T, aliases map[string]string) *sshServer {
	t.Helper()
	sshd := requireSSHD(t)
	srv, err := loopsshd.Start(sshd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := srv.Client("", aliases)
	if err != nil {
		t.Fatal(err)
	}
	return &sshServer{Dir: srv.Dir, Port: srv.Port, BinDir: c.BinDir}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeExec(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
