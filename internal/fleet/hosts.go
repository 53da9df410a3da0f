// Package fleet puts the seats of several hosts in one plane with nothing but
// OpenSSH: the hosts file ($PANTTY_HOME/hosts.toml), a bounded call of the
// remote `pantty` over the `ssh` on PATH (so ~/.ssh/config, ControlMaster,
// jump hosts and agents work as a person set them up), the parallel fan-out
// of one call over every host, and the combined events cursor. No daemon, no
// protocol of its own: every remote answer is the remote pantty's own --json.
// What stays per host (the state, the lock, recovery) is the design: a host
// that cannot be reached keeps its seats running and recovered on its own.
package fleet

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// Local is the name the state root of this machine has in a fleet listing; a
// hosts file may not use it.
const Local = "local"

// maxHostsBytes bounds the hosts file a read takes (a few lines per host).
const maxHostsBytes = 1 << 20

// Host is one [hosts.NAME] table of hosts.toml.
type Host struct {
	Name string `toml:"-"`
	// SSH is the destination given to the `ssh` on PATH, as a person types it.
	SSH string `toml:"ssh"`
	// Pantty is the remote binary; empty: `pantty` on the remote PATH.
	Pantty string `toml:"pantty"`
	// Home is the remote state root; empty: the remote's own default.
	Home string `toml:"home"`
	// local marks this machine's own state root: run without ssh.
	local bool
}

// IsLocal reports whether the host is this machine's own state root.
func (h Host) IsLocal() bool { return h.local }

// LocalHost is this machine's state root as a fleet host: bin is this
// pantty binary, home the state root it reads.
func LocalHost(bin, home string) Host {
	return Host{Name: Local, Pantty: bin, Home: home, local: true}
}

// HostsPath is $PANTTY_HOME/hosts.toml.
func HostsPath(home string) string { return filepath.Join(home, "hosts.toml") }

// file is hosts.toml as decoded.
type file struct {
	Hosts map[string]Host `toml:"hosts"`
}

// ErrNoHost is a host name the hosts file does not have.
var ErrNoHost = errors.New("no such host")

// ErrBadHosts is a hosts file that does not decode or validate: bad input,
// named by file and line.
var ErrBadHosts = errors.New("bad hosts.toml")

// Load reads hosts.toml under home, sorted by name. A missing file is no
// hosts (a machine that is not part of a fleet); an unreadable or invalid one
// is an error naming the file and the line.
func Load(home string) ([]Host, error) {
	path := HostsPath(home)
	data, err := fsafe.ReadBounded(path, maxHostsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f file
	if err := fsatomic.DecodeStrict(path, data, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadHosts, err)
	}
	var hosts []Host
	for name, h := range f.Hosts {
		h.Name = name
		if err := h.validate(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadHosts, path, err)
		}
		hosts = append(hosts, h)
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	return hosts, nil
}

// validate checks one table: a name by seat names' rules, a destination ssh
// cannot take for an option.
func (h Host) validate() error {
	if err := state.ValidateNameOf("host", h.Name); err != nil {
		return fmt.Errorf("[hosts.%s]: %v", h.Name, strings.TrimPrefix(err.Error(), state.ErrBadInput.Error()+": "))
	}
	switch {
	case h.Name == Local:
		return fmt.Errorf("[hosts.%s]: %q names this machine's own state root in a fleet listing: pick another name", h.Name, Local)
	case strings.TrimSpace(h.SSH) == "":
		return fmt.Errorf("[hosts.%s]: ssh is missing: give the destination you would type after ssh", h.Name)
	case strings.HasPrefix(h.SSH, "-"):
		return fmt.Errorf("[hosts.%s]: ssh = %q starts with '-': a destination, not an option (put options in ~/.ssh/config)", h.Name, h.SSH)
	}
	return nil
}

// Find returns the named host of hosts, or ErrNoHost.
func Find(hosts []Host, name string) (Host, error) {
	for _, h := range hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("%w %q in the hosts file", ErrNoHost, name)
}

// Command is the command line a person pastes to run `pantty ARGS` on the
// host: the hints pantty prints about a host are this.
func (h Host) Command(args ...string) string {
	bin := h.Pantty
	if bin == "" {
		bin = "pantty"
	}
	words := []string{bin}
	if h.Home != "" {
		words = append(words, "--home", h.Home)
	}
	cmd := strings.Join(append(words, args...), " ")
	if h.local {
		return strings.Join(append([]string{"pantty"}, args...), " ")
	}
	return "ssh " + h.SSH + " " + quote(cmd)
}

// SplitTarget splits a seat named `HOST:SEAT` into its host and seat; a plain
// seat name has no host. Both names are checked by seat names' rules.
func SplitTarget(name string) (host, seatName string, err error) {
	host, seatName, ok := strings.Cut(name, ":")
	if !ok {
		return "", name, nil
	}
	if err := state.ValidateNameOf("host", host); err != nil {
		return "", "", err
	}
	if err := state.ValidateName(seatName); err != nil {
		return "", "", err
	}
	return host, seatName, nil
}
