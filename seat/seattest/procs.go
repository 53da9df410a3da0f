package seattest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pantty/pantty/internal/procid"
)

// HarnessPIDs lists the live simulator processes running for this seat (their
// command line runs `sim` with this seat's settings file): a second harness on
// one seat shows up here as a second pid.
func (h *Harness) HarnessPIDs() []int {
	settings := h.Seat().SettingsPath()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 2 || args[1] != "sim" || !strings.Contains(string(b), settings) {
			continue
		}
		if _, err := procid.Start(pid); err == nil { // not a zombie
			out = append(out, pid)
		}
	}
	// A child the simulator forks shows the simulator's command line until it
	// execs: that is the same harness, not a second one.
	var harnesses []int
	for _, pid := range out {
		if !slices.Contains(out, parentOf(pid)) {
			harnesses = append(harnesses, pid)
		}
	}
	return harnesses
}

// parentOf reads a process's parent pid from /proc (0 when it cannot).
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
