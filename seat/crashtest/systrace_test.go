//go:build linux && amd64

package crashtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
)

// The system calls the tests name (linux/amd64 numbers).
const (
	sysWrite     = 1
	sysFsync     = 74
	sysFdatasync = 75
	sysRename    = 82
	sysLink      = 86
	sysGetppid   = 110 // the child's step marker: the Go runtime never makes it
	sysExitGroup = 231
	sysRenameat  = 264
	sysLinkat    = 265
	sysRenameat2 = 316
)

var sysNames = map[uint64]string{
	0: "read", 1: "write", 3: "close", 4: "stat", 5: "fstat", 6: "lstat", 8: "lseek", 9: "mmap",
	13: "rt_sigaction", 14: "rt_sigprocmask", 16: "ioctl", 17: "pread64", 18: "pwrite64", 24: "sched_yield",
	35: "nanosleep", 39: "getpid", 72: "fcntl", 73: "flock", 74: "fsync", 75: "fdatasync", 77: "ftruncate",
	79: "getcwd", 82: "rename", 83: "mkdir", 86: "link", 87: "unlink", 90: "chmod", 91: "fchmod",
	110: "getppid", 186: "gettid", 202: "futex", 217: "getdents64", 228: "clock_gettime", 231: "exit_group",
	257: "openat", 258: "mkdirat", 262: "newfstatat", 263: "unlinkat", 264: "renameat", 265: "linkat",
	268: "fchmodat", 280: "utimensat", 316: "renameat2", 318: "getrandom", 332: "statx",
}

func sysName(nr uint64) string {
	if n, ok := sysNames[nr]; ok {
		return n
	}
	return fmt.Sprintf("syscall#%d", nr)
}

// stop is one system-call stop of one thread of the traced child: the entry
// (before the kernel runs it) or the exit (after, with its result).
type stop struct {
	TID   int
	Nr    uint64
	Entry bool
	Args  [6]uint64
	Ret   int64 // exit only
}

func (s stop) name() string { return sysName(s.Nr) }

var traceMu sync.Mutex

// ptraceOExitKill makes the kernel kill the tracee if the tracer dies, so a
// failed test never leaves a stopped child behind.
const ptraceOExitKill = 0x100000

// trace runs cmd under ptrace, following every thread (PTRACE_O_TRACECLONE),
// and calls on at each system-call entry and exit. When on returns true the
// whole child is SIGKILLed right there: at an entry the call never runs. trace
// returns once every thread is gone, with the child's wait status. cmd's
// stdio must be nil or *os.File (no copying goroutines: the child is reaped
// here, not by cmd.Wait).
func trace(cmd *exec.Cmd, on func(pid int, s stop) (kill bool)) (syscall.WaitStatus, error) {
	// wait4(-1) reaps any child of this process: one trace at a time.
	traceMu.Lock()
	defer traceMu.Unlock()
	// Every ptrace request must come from the thread that traces.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return 0, fmt.Errorf("wait for the exec stop: %w", err)
	}
	if !ws.Stopped() {
		return ws, fmt.Errorf("child did not stop at exec: %v", ws)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACESYSGOOD|syscall.PTRACE_O_TRACECLONE|ptraceOExitKill); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return 0, fmt.Errorf("ptrace options: %w", err)
	}
	if err := syscall.PtraceSyscall(pid, 0); err != nil {
		return 0, err
	}
	inSys := map[int]bool{}
	known := map[int]bool{pid: true}
	killed := false
	var final syscall.WaitStatus
	for {
		tid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return final, err
		}
		if ws.Exited() || ws.Signaled() {
			if tid == pid {
				final = ws
			}
			continue
		}
		if !ws.Stopped() {
			continue
		}
		sig := ws.StopSignal()
		resume := 0
		switch {
		case killed:
			continue // SIGKILL is on its way to every thread
		case sig == syscall.SIGTRAP|0x80:
			var regs syscall.PtraceRegs
			if err := syscall.PtraceGetRegs(tid, &regs); err == nil {
				entry := !inSys[tid]
				inSys[tid] = entry
				s := stop{TID: tid, Nr: regs.Orig_rax, Entry: entry,
					Args: [6]uint64{regs.Rdi, regs.Rsi, regs.Rdx, regs.R10, regs.R8, regs.R9}}
				if !entry {
					s.Ret = int64(regs.Rax)
				}
				if on(pid, s) {
					killed = true
					syscall.Kill(pid, syscall.SIGKILL)
					continue
				}
			}
		case sig == syscall.SIGTRAP:
			// a PTRACE_EVENT stop (clone, exec): nothing to deliver
		case sig == syscall.SIGSTOP && !known[tid]:
			// the first stop of a thread attached by TRACECLONE
		default:
			resume = int(sig) // a real signal (the Go runtime's SIGURG, ...): deliver it
		}
		known[tid] = true
		syscall.PtraceSyscall(tid, resume)
	}
	return final, nil
}

// peekString reads a NUL-terminated string from the tracee's memory.
func peekString(tid int, addr uint64) string {
	var out []byte
	buf := make([]byte, 8)
	for len(out) < 4096 {
		n, err := syscall.PtracePeekData(tid, uintptr(addr)+uintptr(len(out)), buf)
		if err != nil || n == 0 {
			break
		}
		for _, b := range buf[:n] {
			if b == 0 {
				return string(out)
			}
			out = append(out, b)
		}
	}
	return string(out)
}

// fdPath names what a descriptor of the tracee refers to.
func fdPath(pid int, fd uint64) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, int32(fd)))
	if err != nil {
		return fmt.Sprintf("fd %d (?)", int32(fd))
	}
	return p
}

// atFDCWD is AT_FDCWD (-100) as the register holds it.
const atFDCWD = 0xffffff9c

// atPath resolves a path argument relative to a dirfd argument (AT_FDCWD is
// the tracee's working directory).
func atPath(pid int, dirfd uint64, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	base := ""
	if dirfd == atFDCWD || int32(dirfd) == -100 {
		base, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	} else {
		base = fdPath(pid, dirfd)
	}
	return filepath.Join(base, path)
}

// describe renders the file-system meaning of a system call entry: which file
// an fsync syncs, what a rename or link moves where.
func describe(pid int, s stop) string {
	switch s.Nr {
	case sysFsync, sysFdatasync:
		return s.name() + " " + fdPath(pid, s.Args[0])
	case sysRename, sysLink:
		return fmt.Sprintf("%s %s -> %s", s.name(), atPath(pid, atFDCWD, peekString(s.TID, s.Args[0])),
			atPath(pid, atFDCWD, peekString(s.TID, s.Args[1])))
	case sysRenameat, sysRenameat2, sysLinkat:
		return fmt.Sprintf("%s %s -> %s", s.name(), atPath(pid, s.Args[0], peekString(s.TID, s.Args[1])),
			atPath(pid, s.Args[2], peekString(s.TID, s.Args[3])))
	case 257: // openat
		return "openat " + atPath(pid, s.Args[0], peekString(s.TID, s.Args[1]))
	case sysWrite:
		return fmt.Sprintf("write %s (%d bytes)", fdPath(pid, s.Args[0]), s.Args[2])
	}
	return s.name()
}
