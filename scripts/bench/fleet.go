package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pantty/pantty/internal/loopsshd"
)

// fleetSizes are the numbers of hosts `status --all-hosts` is timed over.
var fleetSizes = []int{1, 4, 16}

// fleetSeats is the number of (initialised, stopped) seats in each host's
// state root: the cost measured is the fan-out, not the seats.
const fleetSeats = 2

// fleetBound is the --host-timeout of every measured listing: far above any
// answer here, so a slow host is a failed check, never a figure cut short.
const fleetBound = "60s"

// fleetRig is the fleet section's setup: one private sshd on loopback, a
// state root per host alias, and two client configs for it, one without
// and one with ControlMaster.
type fleetRig struct {
	srv     *loopsshd.Server
	aliases []string          // h01 … h16, every one this server
	homes   map[int]string    // hosts -> this machine's state root, whose hosts.toml names that many
	remote  map[string]string // alias -> its state root
	off, on loopsshd.Client
	cmDir   string // the ControlMaster sockets (ControlPath)
}

// fleet measures `pantty status --all-hosts --json` over 1, 4 and 16 hosts,
// each a state root with two stopped sim seats reached through a private
// sshd on 127.0.0.1, without ControlMaster and with it (ControlMaster auto,
// a ControlPath per host alias, ControlPersist), against `ssh HOST true`
// through the same config in the same run. The ControlMaster settings are in
// the ssh config file the bench's `ssh` reads (ssh -F), where a user puts
// them (~/.ssh/config); hosts.toml names only destinations. The modes and
// sizes are interleaved within each round, so the machine's load falls on
// all of them alike.
func (b *bench) fleet() error {
	sshd, err := loopsshd.SSHD()
	if err != nil {
		b.logf("   fleet: skipped: %v", err)
		b.add(row{Section: "7 fleet", What: "skipped: " + err.Error()})
		return nil
	}
	f, err := b.fleetSetup(sshd)
	if err != nil {
		return err
	}
	b.logf("   sshd on 127.0.0.1:%d, %d state roots of %d seats; load average %s", f.srv.Port, len(f.aliases), fleetSeats, loadAvg())

	// Warm-up, untimed: the host key goes into known_hosts once, and the
	// binaries and state roots into the page cache.
	if r := b.sshTrue(f.off); r.Code != 0 {
		return fmt.Errorf("ssh %s true: %s", f.aliases[0], r)
	}
	if _, err := b.fleetStatus(f, f.off, len(f.aliases)); err != nil {
		return err
	}

	runs := b.pick(7, 15)
	var sshOff, sshOn, here, hereCPU durs
	type sample struct{ wall, cpu durs }
	status := map[bool]map[int]*sample{false: {}, true: {}}
	for _, n := range fleetSizes {
		status[false][n], status[true][n] = &sample{}, &sample{}
	}
	cold := &sample{}
	take := func(s *sample, c loopsshd.Client, n int) error {
		r, err := b.fleetStatus(f, c, n)
		s.wall, s.cpu = append(s.wall, r.Wall), append(s.cpu, r.CPU)
		return err
	}
	for i := 0; i < runs; i++ {
		// One host's own listing run here, without ssh: the two remote
		// pantty processes of every call cost about this each.
		r := b.runIn(b.env(f.remote[f.aliases[0]], ""), "", "status", "--json")
		if r.Code != 0 {
			return fmt.Errorf("status --json: %s", r)
		}
		here, hereCPU = append(here, r.Wall), append(hereCPU, r.CPU)
		// One round trip, then the listing over each fleet size.
		round := func(on bool, c loopsshd.Client, ssh *durs) error {
			r := b.sshTrue(c)
			if r.Code != 0 {
				return fmt.Errorf("ssh true (ControlMaster %v): %s", on, r)
			}
			*ssh = append(*ssh, r.Wall)
			for _, n := range fleetSizes {
				if err := take(status[on][n], c, n); err != nil {
					return err
				}
			}
			return nil
		}
		// ControlMaster off: every call is a new connection.
		if err := round(false, f.off, &sshOff); err != nil {
			return err
		}
		// ControlMaster on: the first listing with no master running starts
		// one per host; the rest are multiplexed over them.
		f.stopMasters()
		if err := take(cold, f.on, len(f.aliases)); err != nil {
			return err
		}
		if err := round(true, f.on, &sshOn); err != nil {
			return err
		}
	}
	masters := f.masters()
	b.check("fleet: one ControlMaster per host", len(masters) == len(f.aliases), "%d masters running for %d hosts after the runs", len(masters), len(f.aliases))

	const sec = "7 fleet"
	b.spreadRow(sec, fmt.Sprintf("status --json of one host's state root (%d seats), run here without ssh", fleetSeats), here)
	b.withCPU(hereCPU)
	b.spreadRow(sec, "ssh HOST true, ControlMaster off (baseline)", sshOff)
	for _, n := range fleetSizes {
		b.spreadRow(sec, fmt.Sprintf("status --all-hosts, %d host(s), ControlMaster off", n), status[false][n].wall)
		b.withCPU(status[false][n].cpu)
		b.against(sshOff)
	}
	b.spreadRow(sec, fmt.Sprintf("  the same, %d hosts, ControlMaster on, first call (the masters start)", len(f.aliases)), cold.wall)
	b.withCPU(cold.cpu)
	b.against(sshOff)
	b.spreadRow(sec, "ssh HOST true, ControlMaster on, master running (baseline)", sshOn)
	for _, n := range fleetSizes {
		b.spreadRow(sec, fmt.Sprintf("status --all-hosts, %d host(s), ControlMaster on", n), status[true][n].wall)
		b.withCPU(status[true][n].cpu)
		b.against(sshOn)
	}
	b.logf("   load average at the end of the fleet section %s", loadAvg())
	return nil
}

// fleetSetup starts the sshd, makes the hosts' state roots and seats, the
// two client configs and this machine's state roots with their hosts.toml.
// Everything it starts is stopped by cleanup.
func (b *bench) fleetSetup(sshd string) (*fleetRig, error) {
	dir := filepath.Join(b.root, "sshd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	srv, err := loopsshd.Start(sshd, dir)
	if err != nil {
		return nil, err
	}
	f := &fleetRig{srv: srv, homes: map[int]string{}, remote: map[string]string{}, cmDir: filepath.Join(b.root, "cm")}
	b.stops = append(b.stops, func() {
		f.stopMasters() // first: a master's session holds an sshd process of its own
		srv.Close()
	})
	if err := os.MkdirAll(f.cmDir, 0o700); err != nil {
		return nil, err
	}
	max := fleetSizes[len(fleetSizes)-1]
	aliases := map[string]string{}
	for i := 1; i <= max; i++ {
		alias := fmt.Sprintf("h%02d", i)
		f.aliases = append(f.aliases, alias)
		aliases[alias] = ""
		home := filepath.Join(b.root, "fleet-"+alias)
		for j := 1; j <= fleetSeats; j++ {
			if _, err := b.newRealSeat(home, "", fmt.Sprintf("s%d", j)); err != nil {
				return nil, err
			}
		}
		f.remote[alias] = home
	}
	if f.off, err = srv.Client("off", aliases); err != nil {
		return nil, err
	}
	// ControlPath %n (the alias as typed), not the usual %C: every alias here
	// is the same 127.0.0.1:port as the same user, so %C would give the whole
	// fleet one shared master, where hosts of a real fleet have one each.
	if f.on, err = srv.Client("on", aliases, "ControlMaster auto", "ControlPath "+f.cmDir+"/%n", "ControlPersist 10m"); err != nil {
		return nil, err
	}
	for _, n := range fleetSizes {
		home := filepath.Join(b.root, fmt.Sprintf("fleet-local-%d", n))
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		var toml strings.Builder
		for _, alias := range f.aliases[:n] {
			fmt.Fprintf(&toml, "[hosts.%s]\nssh = %q\npantty = %q\nhome = %q\n\n", alias, alias, b.pantty, f.remote[alias])
		}
		if err := os.WriteFile(filepath.Join(home, "hosts.toml"), []byte(toml.String()), 0o600); err != nil {
			return nil, err
		}
		f.homes[n] = home
	}
	return f, nil
}

// fleetStatus runs `pantty status --all-hosts --json` over n hosts with the
// client's ssh first on PATH and checks every host answered with its seats.
// The result's CPU is this machine's side (pantty, the ssh clients, the
// local listing), not the sshd sessions'.
func (b *bench) fleetStatus(f *fleetRig, c loopsshd.Client, n int) (result, error) {
	env := b.env(f.homes[n], "", "PATH="+c.BinDir+":"+os.Getenv("PATH"))
	r := b.runIn(env, "", "status", "--all-hosts", "--json", "--host-timeout", fleetBound)
	if r.Code != 0 {
		return r, fmt.Errorf("status --all-hosts over %d hosts: %s", n, r)
	}
	var doc struct {
		Hosts []struct {
			Host, State, Reason string
			Doc                 struct{ Seats []json.RawMessage }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		return r, fmt.Errorf("status --all-hosts over %d hosts: not JSON: %v", n, err)
	}
	ok := len(doc.Hosts) == n+1 // the hosts and this machine's own (local)
	for _, h := range doc.Hosts {
		if h.State != "ok" || h.Host != "local" && len(h.Doc.Seats) != fleetSeats {
			ok = false
		}
	}
	if !ok {
		return r, fmt.Errorf("status --all-hosts over %d hosts: want %d hosts ok, each with %d seats: %s", n, n+1, fleetSeats, trim(r.Stdout))
	}
	return r, nil
}

// sshTrue is one `ssh -o BatchMode=yes HOST true` through the client's
// config (the options pantty gives every call), timed fork to reaped.
func (b *bench) sshTrue(c loopsshd.Client) result {
	start := time.Now()
	out, err := exec.Command(filepath.Join(c.BinDir, "ssh"), "-o", "BatchMode=yes", "h01", "true").CombinedOutput()
	r := result{Wall: time.Since(start), Stderr: string(out)}
	if err != nil {
		r.Code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		}
	}
	return r
}

// masterPID matches `ssh -O check`'s answer.
var masterPID = regexp.MustCompile(`Master running \(pid=(\d+)\)`)

// masters are the pids of the ControlMasters running, by host alias.
func (f *fleetRig) masters() map[string]int {
	pids := map[string]int{}
	for _, alias := range f.aliases {
		out, _ := exec.Command(filepath.Join(f.on.BinDir, "ssh"), "-O", "check", alias).CombinedOutput()
		if m := masterPID.FindSubmatch(out); m != nil {
			pids[alias], _ = strconv.Atoi(string(m[1]))
		}
	}
	return pids
}

// stopMasters ends every ControlMaster as a user would (`ssh -O exit`),
// and kills one by its pid when that fails.
func (f *fleetRig) stopMasters() {
	for alias, pid := range f.masters() {
		if exec.Command(filepath.Join(f.on.BinDir, "ssh"), "-O", "exit", alias).Run() != nil {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
}

// spreadRow adds a timing row with its spread (min–max).
func (b *bench) spreadRow(section, what string, d durs) {
	b.timing(section, what, d, 0, "")
	s := d.sorted()
	if len(s) > 0 {
		b.rows[len(b.rows)-1].Spread = fmtD(s[0]) + "–" + fmtD(s[len(s)-1])
	}
}

// against sets the last row's baseline and its ratio to it (medians), as a
// multiple.
func (b *bench) against(base durs) {
	r := &b.rows[len(b.rows)-1]
	r.Base = fmtD(base.median())
	r.Ratio = fmt.Sprintf("%.2f×", r.MedMS/ms(base.median()))
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute averages.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
