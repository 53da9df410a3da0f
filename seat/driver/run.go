package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/launch"
	"github.com/pantty/pantty/seat/outage"
	"github.com/pantty/pantty/seat/state"
)

// Run is the body of the hidden `pantty __drive` command: take the lock or
// report who holds it, then run the loop. fd 3, when present, is the pipe to the
// spawning start.
func Run(home, name, pantty string) int {
	var pipe *os.File
	if f := os.NewFile(3, "progress"); f != nil {
		if _, err := f.Stat(); err == nil {
			pipe = f
		}
	}
	enc := func(p seat.Progress) {
		if pipe == nil {
			return
		}
		b, _ := json.Marshal(p)
		pipe.Write(append(b, '\n'))
		if p.State != "progress" {
			pipe.Close()
			pipe = nil
		}
	}
	logger := log.New(os.Stderr, "", log.LstdFlags|log.Lmicroseconds)
	fail := func(code int, err error) int {
		logger.Printf("driver: %v", err)
		state := "error"
		if code == 3 {
			state = "refused"
		}
		enc(seat.Progress{State: state, Text: err.Error()})
		return code
	}
	s, err := state.Existing(home, name)
	if err != nil {
		return fail(2, err)
	}
	cfg, err := s.LoadConfig()
	if err != nil {
		return fail(2, err)
	}
	// Launch the way the person's `seat start` recorded, whoever started this
	// driver (cron's PATH=/usr/bin:/bin and no key must not reach the harness).
	switch rec, err := s.LaunchEnvFile().Read(); {
	case err == nil:
		launch.AdoptLaunchEnv(rec, cfg)
		logger.Printf("driver: harness environment from launch-env.toml (recorded %s by %s)", rec.RecordedAt.Format(time.RFC3339), rec.By)
	case errors.Is(err, fs.ErrNotExist):
		logger.Printf("driver: no launch-env.toml (never recorded by 'pantty seat start'): the harness gets this process's environment")
	default:
		return fail(1, err)
	}
	// Start on the running rung (demotion floor, provider blocks); the loop keeps
	// following it at every turn boundary.
	if cfg, err = outage.RunningConfig(s, cfg, time.Now()); err != nil {
		logger.Printf("driver: ladder: %v (starting on the top rung)", err)
	}
	ad, err := harness.AdapterFor(cfg.Harness)
	if err != nil {
		return fail(2, err)
	}
	lock, err := seat.Acquire(s)
	if errors.Is(err, state.ErrOwned) {
		return fail(3, err)
	}
	if err != nil {
		return fail(1, err)
	}
	defer lock.Release()
	logger.SetPrefix(fmt.Sprintf("[%s %s] ", name, lock.Owner.Holder))
	logger.Printf("driver pid %d holds %s", os.Getpid(), s.LockPath())
	d := &Driver{S: s, Cfg: cfg, Ad: ad, Lock: lock, Pantty: pantty, Log: logger}
	if pipe != nil {
		// Only a driver someone waits for reports (and gives up at ready_timeout);
		// one spawned by recover keeps trying, and recover judges it.
		d.Report = enc
	}
	code := d.Loop()
	logger.Printf("driver exits with %d", code)
	if pipe != nil {
		enc(seat.Progress{State: "error", Text: "driver exited before the seat was ready; see " + s.DriverLogPath()})
	}
	return code
}
