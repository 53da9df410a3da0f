package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sshServer is a private OpenSSH server on 127.0.0.1 for one test: its own
// host key, config and authorized key, run as the current user.
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
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			if _, err := exec.LookPath("ssh"); err == nil {
				return p
			}
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("sshd or ssh is not installed (scripts/test.sh installs openssh-server)")
	}
	t.Skip("sshd or ssh is not installed (apt-get install openssh-server; scripts/test.sh does)")
	return ""
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSSHD starts sshd -D on a free loopback port and writes the client
// config: aliases maps a host alias to extra ssh_config lines (none: this
// server). The ssh on BinDir is /usr/bin/ssh -F that config: OpenSSH reads
// ~/.ssh/config from the passwd entry, not $HOME, so a test cannot point it
// elsewhere by environment; pantty runs plain `ssh DEST` all the same.
func startSSHD(t *testing.T, aliases map[string]string) *sshServer {
	t.Helper()
	sshd := requireSSHD(t)
	dir := t.TempDir()
	s := &sshServer{Dir: dir, Port: freePort(t), BinDir: filepath.Join(dir, "bin")}
	run := func(name string, args ...string) {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host_key"))
	run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "user_key"))
	pub, _ := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	write(t, filepath.Join(dir, "authorized_keys"), string(pub))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if u.Uid == "0" {
		os.MkdirAll("/run/sshd", 0o755) // privilege separation directory, as the service makes it
	}
	write(t, filepath.Join(dir, "sshd_config"), fmt.Sprintf(`ListenAddress 127.0.0.1
HostKey %[1]s/host_key
PidFile %[1]s/sshd.pid
AuthorizedKeysFile %[1]s/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
MaxStartups 100
MaxSessions 100
LogLevel ERROR
`, dir))
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"), "-p", fmt.Sprint(s.Port))
	log, _ := os.Create(filepath.Join(dir, "sshd.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var cfg strings.Builder
	for alias, extra := range aliases {
		fmt.Fprintf(&cfg, "Host %s\n", alias)
		if extra == "" {
			extra = fmt.Sprintf("Port %d", s.Port)
		}
		fmt.Fprintf(&cfg, "  %s\n", extra)
	}
	fmt.Fprintf(&cfg, `Host *
  HostName 127.0.0.1
  User %s
  IdentityFile %s/user_key
  IdentitiesOnly yes
  UserKnownHostsFile %s/known_hosts
  StrictHostKeyChecking accept-new
  LogLevel ERROR
`, u.Username, dir, dir)
	write(t, filepath.Join(dir, "ssh_config"), cfg.String())
	os.MkdirAll(s.BinDir, 0o755)
	writeExec(t, filepath.Join(s.BinDir, "ssh"), fmt.Sprintf("#!/bin/sh\nexec /usr/bin/ssh -F %s/ssh_config \"$@\"\n", dir))
	// Ready when it accepts a connection.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			t.Fatalf("sshd did not listen within 10s: %s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
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
