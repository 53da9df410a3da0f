// Package procid is a process's identity: its pid with its start time, so a
// recycled pid is never taken for the process it once named (an owner record,
// a pane process, a harness).
package procid

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Start returns a process's start time in clock ticks since boot
// (/proc/PID/stat field 22). Together with the pid it identifies one process:
// a recycled pid has another start time, so pantty never signals a stranger.
func Start(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("bad pid %d", pid)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces and ')', so parse after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	if f[0] == "Z" {
		return 0, fmt.Errorf("process %d is a zombie", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Alive reports whether pid is still the process that started at start.
func Alive(pid int, start uint64) bool {
	got, err := Start(pid)
	return err == nil && got == start
}
