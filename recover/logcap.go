package recover

import (
	"fmt"
	"os"
	"path/filepath"
)

// LogCap is the size past which the scheduled runs' log is rotated: cron and
// launchd append every sweep's output to $PANTTY_HOME/recover.log, which with a
// one-minute schedule and a failing seat grows without end otherwise.
const LogCap = 1 << 20

// capLog rotates recover.log to recover.log.1 (replacing the older one) once it
// is over LogCap, so the log holds at most two generations. The scheduler
// opened the log before this run began, so this run's own output lands in
// recover.log.1 and the next run starts the fresh file. A recover.log that is
// not a regular file (a symlink someone planted, a FIFO) is moved aside the
// same way, never followed or truncated. It runs under the sweep lock and
// returns what it did, for the report's warnings, or "".
func capLog(home string) string {
	p := filepath.Join(home, LogName)
	fi, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if fi.Mode().IsRegular() && fi.Size() <= LogCap {
		return ""
	}
	old := p + ".1"
	if err := os.Rename(p, old); err != nil {
		return fmt.Sprintf("%s: could not rotate: %v", p, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("%s was not a regular file (%s): moved aside to %s, not followed", p, fi.Mode().Type(), old)
	}
	return ""
}
