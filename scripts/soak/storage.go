package main

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// The storage fault (docs/reliability.md, "Storage faults"): when the soak
// runs as root, the seats' state root is a tmpfs of its own, and a fault
// fills it for a few seconds — every seat at once, as a real disk fills.
// Each seat's harness directory (the simulator's request log and
// transcripts, which the soak counts from) is bound over from the ordinary
// disk: the model's records must survive the fault they are judged against.
const (
	fStateFull = "state-full" // the state root has no room left for 1–4 s; sends are refused meanwhile, nothing is lost or doubled
	stateRoot  = "256m"
)

// mountStateRoot makes w.home a tmpfs when the soak runs as root; it reports
// whether it did (the storage fault joins the others only then).
func (w *world) mountStateRoot() bool {
	if os.Geteuid() != 0 {
		return false
	}
	if err := os.MkdirAll(w.home, 0o700); err != nil {
		return false
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+stateRoot+",mode=0700", "tmpfs", w.home).CombinedOutput(); err != nil {
		w.log.printf("state root stays on the ordinary disk (no storage fault): mount tmpfs: %v: %s", err, out)
		return false
	}
	w.mounts = append(w.mounts, w.home)
	return true
}

// keepHarnessDir binds a seat's harness directory from outside the tmpfs.
func (w *world) keepHarnessDir(r *seatRig) error {
	dir := w.seat(r).HarnessDir()
	from := filepath.Join(w.root, "harness-"+r.name)
	if err := errors.Join(os.MkdirAll(from, 0o700), os.MkdirAll(dir, 0o700)); err != nil {
		return err
	}
	if out, err := exec.Command("mount", "--bind", from, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("bind %s: %v: %s", dir, err, out)
	}
	w.mounts = append(w.mounts, dir)
	return nil
}

// unmount undoes what the soak mounted, innermost first. The seats'
// driver logs are copied out of a tmpfs state root first (to
// driver-logs/SEAT.log beside soak.log): a failed run is read from them, and
// the tmpfs takes them with it.
func (w *world) unmount() {
	if len(w.mounts) > 0 && w.mounts[0] == w.home {
		logs, _ := filepath.Glob(filepath.Join(w.home, "seats", "*", "driver.log"))
		if len(logs) > 0 {
			dir := filepath.Join(w.root, "driver-logs")
			os.MkdirAll(dir, 0o700)
			for _, l := range logs {
				if b, err := os.ReadFile(l); err == nil {
					os.WriteFile(filepath.Join(dir, filepath.Base(filepath.Dir(l))+".log"), b, 0o600)
				}
			}
		}
	}
	for i := len(w.mounts) - 1; i >= 0; i-- {
		if out, err := exec.Command("umount", "-l", w.mounts[i]).CombinedOutput(); err != nil {
			w.log.printf("teardown: umount %s: %v: %s", w.mounts[i], err, out)
		}
	}
	w.mounts = nil
}

// fillStateRoot writes a file into the state root until it has no room,
// holds it there for 1–4 s, then removes it. It returns what it did.
func (w *world) fillStateRoot(rng *rand.Rand) (string, bool) {
	path := filepath.Join(w.home, "soak-filler")
	f, err := os.Create(path)
	if err != nil {
		return "could not create the filler: " + err.Error(), false
	}
	block := make([]byte, 64<<10)
	var filled int64
	for {
		n, err := f.Write(block)
		filled += int64(n)
		if err != nil {
			break
		}
	}
	for { // the last partial block
		if _, err := f.Write(block[:512]); err != nil {
			break
		}
	}
	f.Close()
	hold := time.Duration(1000+rng.Intn(3000)) * time.Millisecond
	time.Sleep(hold) // the fault's length: nothing to wait for but the clock
	if err := os.Remove(path); err != nil {
		return "could not remove the filler: " + err.Error(), false
	}
	return fmt.Sprintf("state root full for %s (%d MiB written)", hold, filled>>20), true
}
