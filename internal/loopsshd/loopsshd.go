// Package loopsshd runs a private OpenSSH server on 127.0.0.1 for the fleet's
// tests and its benchmark: its own host key, its own authorized key and its
// own sshd_config, run as the current user on a free port, and client
// configs that reach it under any number of host aliases. Nothing of the
// user's own ssh setup is read or changed.
//
// OpenSSH reads ~/.ssh/config from the passwd entry, not $HOME, so a client
// config cannot be swapped in by environment: each Client has a directory
// holding an `ssh` that is /usr/bin/ssh -F that config, to be put first on
// PATH. pantty then runs plain `ssh DEST` as it does for a person.
package loopsshd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNotInstalled is sshd or ssh missing from this machine.
var ErrNotInstalled = errors.New("sshd or ssh is not installed (apt-get install openssh-server)")

// SSHD returns the sshd binary, or ErrNotInstalled when it or ssh is missing.
func SSHD() (string, error) {
	if _, err := exec.LookPath("ssh"); err != nil {
		return "", ErrNotInstalled
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/sshd"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// FreePort is a loopback port nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Server is one running sshd.
type Server struct {
	Dir  string // keys, sshd_config, sshd.log and the clients' files
	Port int
	User string // the login every client uses: the current user
	cmd  *exec.Cmd
}

// readyWithin bounds sshd's start-up: it is ready when it accepts a
// connection, normally within tens of milliseconds.
const readyWithin = 10 * time.Second

// Start writes the keys and sshd_config under dir (which must exist) and
// starts sshd -D on a free loopback port; it returns once sshd accepts
// connections. Close stops it.
//
// The server sets SHLVL=1 for its sessions: sshd runs every command through
// the user's login shell, and Debian's bash then reads ~/.bashrc (it does so
// when SSH_CLIENT is set and SHLVL is unset). A CI machine's root .bashrc runs
// `pyenv init`, whose rehash takes a lock file: three hosts asked at once
// waited on it past the 30 s bound, and a killed session left the lock behind
// so every later login hung 60 s (CI, 2026-12-05). The tests and the bench
// measure pantty, not the machine's dotfiles; docs/fleet.md tells users the
// same.
func Start(sshd, dir string) (*Server, error) {
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Port: port, User: u.Username}
	for _, key := range []string{"host_key", "user_key"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, key)).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ssh-keygen %s: %v: %s", key, err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user_key.pub"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		return nil, err
	}
	if u.Uid == "0" {
		os.MkdirAll("/run/sshd", 0o755) // privilege separation directory, as the service makes it
	}
	config := fmt.Sprintf(`ListenAddress 127.0.0.1
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
SetEnv SHLVL=1
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "sshd.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close() // sshd holds its own descriptor
	s.cmd = exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"), "-p", fmt.Sprint(port))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	// Ready when it accepts a connection: poll the port, bounded, since sshd
	// -D says nothing when it starts listening.
	deadline := time.Now().Add(readyWithin)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Close()
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			return nil, fmt.Errorf("sshd did not listen within %s: %s", readyWithin, b)
		}
		time.Sleep(20 * time.Millisecond) // the poll's interval: a connect attempt costs little
	}
}

// Close stops sshd's listener. Sessions already open (a ControlMaster's
// connection) have their own sshd process and end when their client does.
func (s *Server) Close() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
	return nil
}

// Client is one client config for the server and the `ssh` that uses it.
type Client struct {
	Config string // the ssh_config file
	BinDir string // holds `ssh`: /usr/bin/ssh -F Config; put it first on PATH
}

// Client writes a client config named name (files ssh_config[-NAME] and
// bin[-NAME]/ssh under Dir). aliases maps a host alias to its own extra
// ssh_config lines; "" is this server (its port). common lines go into every
// host's block (e.g. ControlMaster, ControlPath, ControlPersist).
func (s *Server) Client(name string, aliases map[string]string, common ...string) (Client, error) {
	suffix := ""
	if name != "" {
		suffix = "-" + name
	}
	c := Client{Config: filepath.Join(s.Dir, "ssh_config"+suffix), BinDir: filepath.Join(s.Dir, "bin"+suffix)}
	names := make([]string, 0, len(aliases))
	for alias := range aliases {
		names = append(names, alias)
	}
	sort.Strings(names)
	var cfg strings.Builder
	for _, alias := range names {
		extra := aliases[alias]
		if extra == "" {
			extra = fmt.Sprintf("Port %d", s.Port)
		}
		fmt.Fprintf(&cfg, "Host %s\n  %s\n", alias, extra)
	}
	fmt.Fprintf(&cfg, `Host *
  HostName 127.0.0.1
  User %s
  IdentityFile %s/user_key
  IdentitiesOnly yes
  UserKnownHostsFile %s/known_hosts
  StrictHostKeyChecking accept-new
  LogLevel ERROR
`, s.User, s.Dir, s.Dir)
	for _, l := range common {
		fmt.Fprintf(&cfg, "  %s\n", l)
	}
	if err := os.WriteFile(c.Config, []byte(cfg.String()), 0o600); err != nil {
		return Client{}, err
	}
	if err := os.MkdirAll(c.BinDir, 0o755); err != nil {
		return Client{}, err
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nexec /usr/bin/ssh -F %s \"$@\"\n", c.Config)
	if err := os.WriteFile(filepath.Join(c.BinDir, "ssh"), []byte(wrapper), 0o755); err != nil {
		return Client{}, err
	}
	return c, nil
}
