package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pantty/pantty/seat/seattest"
)

// fleet is a state root on "this machine" whose hosts.toml names two hosts
// served by a real sshd on loopback (two state roots: ha and hb), a host whose
// port is closed (hdown), one that accepts and never answers (hhang) and one
// whose pantty is too old (hold).
type fleetRig struct {
	t      *testing.T
	a, b   *seattest.Harness
	ssh    *sshServer
	home   string // this machine's state root
	bin    string
	closed int
}

func newFleet(t *testing.T, bad bool) *fleetRig {
	a := seattest.New(t, "wa")
	b := seattest.New(t, "wb")
	// A pantty run through ssh gets no PANTTY_TMUX_SOCKET: each seat names
	// its test's private tmux server in seat.toml, or a remote start would
	// run it on this machine's default server (/tmp/tmux-UID/pantty).
	for _, h := range []*seattest.Harness{a, b} {
		conf, err := os.ReadFile(h.Seat().ConfigPath())
		if err != nil {
			t.Fatal(err)
		}
		h.WriteConfig(strings.Replace(string(conf), "[tmux]", fmt.Sprintf("[tmux]\nsocket = %q", h.Socket), 1))
	}
	closed := freePort(t)
	srv := startSSHD(t, map[string]string{
		"ha": "", "hb": "",
		"hdown": fmt.Sprintf("Port %d", closed),
		"hhang": "ProxyCommand sleep 20",
	})
	home := t.TempDir()
	old := filepath.Join(srv.Dir, "old-pantty")
	writeExec(t, old, "#!/bin/sh\necho 'pantty: flag provided but not defined: -json' >&2\nexit 2\n")
	hosts := fmt.Sprintf("[hosts.ha]\nssh = \"ha\"\npantty = %q\nhome = %q\n\n[hosts.hb]\nssh = \"hb\"\npantty = %q\nhome = %q\n", a.Bin, a.Home, b.Bin, b.Home)
	if bad {
		hosts += fmt.Sprintf("\n[hosts.hdown]\nssh = \"hdown\"\n\n[hosts.hhang]\nssh = \"hhang\"\n\n[hosts.hold]\nssh = \"ha\"\npantty = %q\n", old)
	}
	write(t, filepath.Join(home, "hosts.toml"), hosts)
	return &fleetRig{t: t, a: a, b: b, ssh: srv, home: home, bin: a.Bin, closed: closed}
}

// cmd is pantty on this machine, with the test's ssh first on PATH.
func (f *fleetRig) cmd(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(f.bin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PANTTY_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PANTTY_HOME="+f.home, "PATH="+f.ssh.BinDir+":"+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

func (f *fleetRig) run(stdin string, args ...string) seattest.Result {
	f.t.Helper()
	cmd := f.cmd(stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatal(err)
	}
	return seattest.Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// TestFleetListsEveryHostAndSaysWhichAreUnknown: status and seat list across
// five hosts show the two good hosts' seats; the closed port, the host that
// never answers and the too-old pantty each show unknown with its reason,
// within the bound; the listing exits 4.
// fleetBound is the tests' bound per host. One healthy round trip (sshd,
// the remote pantty twice) takes under a second here; the bound leaves room
// for the whole suite's load (real harnesses, four packages at once), and
// the hanging host's test pays it once per listing.
const fleetBound = 15 * time.Second

func TestFleetListsEveryHostAndSaysWhichAreUnknown(t *testing.T) {
	f := newFleet(t, true)
	start := time.Now()
	r := f.run("", "status", "--all-hosts", "--json", "--host-timeout", fleetBound.String())
	took := time.Since(start)
	if r.Code != 4 {
		t.Fatalf("status --all-hosts with unknown hosts: want exit 4, got %s", r)
	}
	var doc struct {
		Hosts []struct {
			Host, State, Reason string
			Doc                 struct {
				Seats []struct{ Seat string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("status --all-hosts --json: %v\n%s", err, r.Stdout)
	}
	got := map[string]string{}
	for _, h := range doc.Hosts {
		got[h.Host] = h.State + ": " + h.Reason
		switch h.Host {
		case "ha", "hb":
			if h.State != "ok" || len(h.Doc.Seats) != 1 || h.Doc.Seats[0].Seat != "w"+h.Host[1:] {
				t.Errorf("host %s: want ok with its one seat, got %+v", h.Host, h)
			}
		}
	}
	for host, want := range map[string]string{"hdown": "unreachable", "hhang": "timed out", "hold": "too old", "local": "ok"} {
		if !strings.Contains(got[host], want) {
			t.Errorf("host %s: want %q, got %q", host, want, got[host])
		}
	}
	if took > fleetBound+2*time.Second {
		t.Errorf("status --all-hosts took %s: the %s bound per host did not hold", took, fleetBound)
	}
	t.Logf("status --all-hosts over 5 hosts (3 unknown, bound %s): %s", fleetBound, took.Round(time.Millisecond))

	r = f.run("", "seat", "list", "--all-hosts", "--host-timeout", fleetBound.String())
	for _, want := range []string{"ha:wa", "hb:wb", "hdown:*", "hhang:*", "hold:*"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("seat list --all-hosts: no %s in\n%s", want, r.Stdout)
		}
	}
	r = f.run("", "hosts", "--host-timeout", fleetBound.String())
	if r.Code != 4 || !strings.Contains(r.Stdout, "too old") || !strings.Contains(r.Stdout, "fleet") && !strings.Contains(r.Stdout, "ha ") {
		t.Errorf("pantty hosts: %s", r)
	}
}

// TestFleetSendKeepsExitCodesAndIsStoredOnce: a send to HOST:SEAT keeps the
// remote exit codes, --wait brings the reply back, and a send whose ssh is
// killed after the remote stored it is sent again with the same id: one
// message in the remote inbox, processed once.
func TestFleetSendKeepsExitCodesAndIsStoredOnce(t *testing.T) {
	f := newFleet(t, false)
	f.a.Start()
	r := f.run("review PR 42", "seat", "send", "ha:wa", "--id", "m1", "--wait", "--timeout", "60s")
	if r.Code != 0 || r.Stdout == "" {
		t.Fatalf("send --wait to ha:wa: %s", r)
	}
	if r = f.run("another text", "seat", "send", "ha:wa", "--id", "m1"); r.Code != 6 {
		t.Errorf("send of a stored id with another text: want exit 6 (conflict), got %s", r)
	}
	if r = f.run("x", "seat", "send", "ha:nosuch"); r.Code != 5 {
		t.Errorf("send to an unknown remote seat: want exit 5, got %s", r)
	}
	if r = f.run("x", "seat", "send", "nohost:wa"); r.Code != 5 {
		t.Errorf("send to a host the file lacks: want exit 5, got %s", r)
	}

	// hb's seat is not started: the wait blocks with the message stored.
	cmd := f.cmd("drop me once", "seat", "send", "hb:wb", "--id", "m2", "--wait", "--timeout", "90s")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msg := filepath.Join(f.b.Seat().Dir, "inbox", "msgs", "m2.json")
	waitUntil(t, "m2 stored on hb", 3*fleetBound, func() bool { _, err := os.Stat(msg); return err == nil })
	ssh := childNamed(t, cmd.Process.Pid, "ssh")
	syscall.Kill(ssh, syscall.SIGKILL)
	f.b.Start()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("send --wait after a dropped connection: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "sending again") || out.Len() == 0 {
		t.Errorf("want a retry said on stderr and the reply on stdout; stdout %q stderr %q", out.String(), errb.String())
	}
	msgs, _ := filepath.Glob(filepath.Join(f.b.Seat().Dir, "inbox", "msgs", "*.json"))
	if len(msgs) != 1 {
		t.Errorf("hb's inbox holds %d messages, want 1 (stored once): %v", len(msgs), msgs)
	}
	if st := f.b.Status("m2"); st.State != "processed" || st.Attempts != 1 {
		t.Errorf("m2 on hb: %+v, want processed after one attempt", st)
	}
}

// TestFleetEventsMergeAndResume: events --all-hosts merges the hosts'
// streams, every line naming its host, and --since a combined cursor from the
// middle gives exactly the lines after it.
func TestFleetEventsMergeAndResume(t *testing.T) {
	f := newFleet(t, false)
	f.a.Send("e1", "one")
	f.b.Send("e2", "two")
	f.a.Send("e3", "three")
	all := f.events(t)
	if len(all) < 3 {
		t.Fatalf("events --all-hosts: %d lines, want the 3 queued", len(all))
	}
	hosts := map[string]bool{}
	for _, l := range all {
		hosts[l.Host] = true
		if !strings.HasPrefix(l.Cursor, "fleet:") {
			t.Errorf("line without a combined cursor: %+v", l)
		}
	}
	if !hosts["ha"] || !hosts["hb"] {
		t.Errorf("lines of hosts %v, want ha and hb", hosts)
	}
	for cut := range all {
		rest := f.events(t, "--since", all[cut].Cursor)
		if want := all[cut+1:]; fmt.Sprint(ids(rest)) != fmt.Sprint(ids(want)) {
			t.Errorf("resumed after line %d: got %v, want %v", cut, ids(rest), ids(want))
		}
	}
}

// TestFleetEventsResumeAcrossAHostThatWasDown: while one host cannot be
// reached, events --all-hosts gives the other host's new lines, says the
// missing one is unknown (exit 4) and keeps its place in the combined
// cursor; resumed from that cursor once the host is back, the host's lines
// from while it was down come, and nothing already seen comes again.
func TestFleetEventsResumeAcrossAHostThatWasDown(t *testing.T) {
	f := newFleet(t, false)
	f.a.Send("e1", "one")
	f.b.Send("e2", "two")
	seen := f.events(t)
	if len(seen) < 2 {
		t.Fatalf("events --all-hosts: %d lines, want the 2 queued", len(seen))
	}
	hostsFile := filepath.Join(f.home, "hosts.toml")
	up, err := os.ReadFile(hostsFile)
	if err != nil {
		t.Fatal(err)
	}
	// hb's destination becomes the closed port: the host is down.
	write(t, hostsFile, strings.Replace(string(up), `ssh = "hb"`, `ssh = "hdown"`, 1))
	f.a.Send("e3", "three")
	f.b.Send("e4", "four")
	r := f.run("", "events", "--all-hosts", "--settle", "0", "--host-timeout", fleetBound.String(), "--since", seen[len(seen)-1].Cursor)
	if r.Code != 4 || !strings.Contains(r.Stderr, "hb") {
		t.Fatalf("events with hb down: want exit 4 naming hb, got %s", r)
	}
	var during []fleetEvent
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e fleetEvent
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "message" {
			during = append(during, e)
		}
	}
	if got := fmt.Sprint(ids(during)); got != "[ha:wa/e3/queued]" {
		t.Fatalf("while hb was down: %s, want only wa's e3\n%s", got, r.Stdout)
	}
	write(t, hostsFile, string(up))
	after := f.events(t, "--since", during[len(during)-1].Cursor)
	if got := fmt.Sprint(ids(after)); got != "[hb:wb/e4/queued]" {
		t.Fatalf("resumed once hb was back: %s, want exactly hb's e4 (nothing missed, nothing again)", got)
	}
}

type fleetEvent struct {
	Host, Seat, ID, State, Type, Cursor string
}

func (f *fleetRig) events(t *testing.T, args ...string) []fleetEvent {
	t.Helper()
	r := f.run("", append([]string{"events", "--all-hosts", "--settle", "0", "--host-timeout", fleetBound.String()}, args...)...)
	if r.Code != 0 {
		t.Fatalf("events --all-hosts: %s", r)
	}
	var out []fleetEvent
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e fleetEvent
		if line == "" || json.Unmarshal([]byte(line), &e) != nil || e.Type != "message" {
			continue
		}
		out = append(out, e)
	}
	return out
}

func ids(es []fleetEvent) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Seat+"/"+e.ID+"/"+e.State)
	}
	return out
}

// childNamed is the pid of parent's child process named comm.
func childNamed(t *testing.T, parent int, comm string) int {
	t.Helper()
	var pid int
	waitUntil(t, comm+" child of pantty", 10*time.Second, func() bool {
		ds, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, d := range ds {
			b, err := os.ReadFile(d)
			if err != nil {
				continue
			}
			s := string(b)
			name := s[strings.IndexByte(s, '(')+1 : strings.LastIndexByte(s, ')')]
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
			if pp, _ := strconv.Atoi(fields[1]); pp == parent && name == comm {
				pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(d)))
				return true
			}
		}
		return false
	})
	return pid
}

// waitUntil polls cond (a file appearing in another process's state root, a
// child process) until it holds or the limit passes.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFleetSteersARemoteSeat: the verbs that steer a seat take HOST:SEAT and
// run on that host with the flags given here and the remote's exit code, the
// same code the host's own pantty gives for the plain name.
func TestFleetSteersARemoteSeat(t *testing.T) {
	f := newFleet(t, false)
	intent := func() string {
		in, err := f.a.Seat().IntentFile().Read()
		if err != nil {
			return err.Error()
		}
		return string(in.Want)
	}
	if r := f.run("", "seat", "start", "ha:wa"); r.Code != 0 || intent() != "running" {
		t.Fatalf("seat start ha:wa: %s; intent %s", r, intent())
	}
	if r := f.run("", "seat", "start", "ha:wa"); r.Code != 0 || !strings.Contains(r.Stdout+r.Stderr, "already running") {
		t.Errorf("seat start ha:wa again: want the idempotent start's exit 0 and its words, got %s", r)
	}
	if r := f.run("work", "seat", "send", "ha:wa", "--id", "m1", "--wait", "--timeout", "60s"); r.Code != 0 {
		t.Fatalf("send --wait to ha:wa: %s", r)
	}
	// Each verb's exit code is the host's own for the plain name.
	for _, verb := range [][]string{{"seat", "retry", "%s", "m1"}, {"seat", "retry", "%s", "nosuch"}, {"seat", "cancel", "%s"}, {"seat", "cancel", "%s", "extra"}} {
		args := func(name string) []string {
			out := append([]string{}, verb...)
			for i := range out {
				out[i] = strings.ReplaceAll(out[i], "%s", name)
			}
			return out
		}
		remote, local := f.run("", args("ha:wa")...), f.a.Run(args("wa")...)
		if remote.Code != local.Code || strings.Contains(remote.Stderr, "bad seat name") {
			t.Errorf("%v: remote exit %d (%s), the host's own %d (%s)", args("ha:wa"), remote.Code, remote.Stderr, local.Code, local.Stderr)
		}
	}
	if r := f.run("", "seat", "stop", "ha:wa"); r.Code != 0 || intent() != "stopped" {
		t.Fatalf("seat stop ha:wa: %s; intent %s", r, intent())
	}
	// A flag passes with the verb: the stopped seat's queued message is
	// dropped through --queued.
	if r := f.run("queued", "seat", "send", "ha:wa", "--id", "m2"); r.Code != 0 {
		t.Fatalf("send to the stopped ha:wa: %s", r)
	}
	if r := f.run("", "seat", "drop", "ha:wa", "--queued"); r.Code != 0 {
		t.Errorf("seat drop ha:wa --queued: %s", r)
	}
	if st := f.a.Status("m2"); st.State != "failed" || st.Reason != "dropped" {
		t.Errorf("m2 on ha after the remote drop: %+v, want failed, reason dropped", st)
	}
	if r := f.run("", "seat", "stop", "ha:nosuch"); r.Code != 5 {
		t.Errorf("seat stop of a seat the host lacks: want exit 5, got %s", r)
	}
	if r := f.run("", "seat", "stop", "nohost:wa"); r.Code != 5 {
		t.Errorf("seat stop on a host the file lacks: want exit 5, got %s", r)
	}
	if r := f.run("", "seat", "stop", "local:wa"); r.Code != 2 || !strings.Contains(r.Stderr, "pantty seat stop wa") {
		t.Errorf("seat stop local:wa: want exit 2 naming the plain command, got %s", r)
	}
}
